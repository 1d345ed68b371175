package io.npmagent.pipelines.informers;

import io.npmagent.harness.process.Await;
import java.util.Optional;
import com.google.gson.Gson;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1NamespaceList;
import io.kubernetes.client.openapi.models.V1NetworkPolicy;
import io.kubernetes.client.openapi.models.V1NetworkPolicyList;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.npmagent.agent.backend.Backends;
import io.npmagent.agent.run.Agent;
import io.npmagent.agent.source.k8s.KubeClients;
import io.npmagent.agent.source.k8s.KubeSource;
import io.npmagent.dataplane.backend.FakeBackend;
import io.npmagent.pipelines.bench.BenchCluster;
import io.npmagent.dataplane.batch.QueueConfig;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.ClusterEvent;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * One measurement in a JVM of its own, so that nothing but what is measured lives in its heap.
 * {@code agent}: the agent's {@link KubeSource} (slimmed, paged) syncs, then the whole state goes
 * through the compiler and the queue to a backend as one batch, as at boot. {@code plain}: client-java's
 * informers as its examples set them up (no transform), for the three kinds, the baseline for the
 * cache's size. Prints one line, {@code RESULT {json}}.
 */
public final class InformerBenchChild {
    private InformerBenchChild() {}

    public static void main(String[] args) throws Exception {
        java.nio.file.Path kubeconfig = java.nio.file.Path.of(args[0]);
        String mode = args[1];
        int pods = Integer.parseInt(args[2]);
        ApiClient client = KubeClients.connect(kubeconfig);
        long baseline = heapAfterGc();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("mode", mode);
        out.put("pods", pods);
        long t0 = System.nanoTime();
        if (mode.equals("plain")) {
            SharedInformerFactory factory = new SharedInformerFactory(client);
            SharedIndexInformer<V1Pod> p = factory.sharedIndexInformerFor(
                    new GenericKubernetesApi<>(V1Pod.class, V1PodList.class, "", "v1", "pods", client), V1Pod.class, 0);
            SharedIndexInformer<V1Namespace> n = factory.sharedIndexInformerFor(
                    new GenericKubernetesApi<>(V1Namespace.class, V1NamespaceList.class, "", "v1", "namespaces", client), V1Namespace.class, 0);
            SharedIndexInformer<V1NetworkPolicy> np = factory.sharedIndexInformerFor(new GenericKubernetesApi<>(V1NetworkPolicy.class,
                    V1NetworkPolicyList.class, "networking.k8s.io", "v1", "networkpolicies", client), V1NetworkPolicy.class, 0);
            factory.startAllRegisteredInformers();
            await(() -> p.hasSynced() && n.hasSynced() && np.hasSynced());
            out.put("synced_seconds", seconds(t0));
            out.put("cached_pods", p.getIndexer().list().size());
            out.put("cache_heap_bytes", heapAfterGc() - baseline);
            factory.stopAllRegisteredInformers(true);
        } else {
            KubeSource source = new KubeSource(client, Duration.ofMinutes(15));
            source.start();
            await(source::synced);
            double synced = seconds(t0);
            out.put("synced_seconds", synced);
            out.put("cached_pods", source.counts().get("pods"));
            out.put("cache_heap_bytes", heapAfterGc() - baseline);
            FakeBackend backend = new FakeBackend();
            PrometheusRegistry registry = new PrometheusRegistry();
            Agent agent = new Agent(new Backends.Chosen(backend, "fake"), BenchCluster.NODE, QueueConfig.DEFAULTS, registry, new Metrics(registry),
                    Duration.ofMinutes(10));
            long t1 = System.nanoTime();
            List<ClusterEvent> whole = source.wholeStateThenEvents().stream().map(io.npmagent.agent.source.k8s.ObjectChange::event)
                    .filter(java.util.Objects::nonNull).toList();
            agent.start(whole);
            await(agent::converged);
            whole = null;
            double apply = seconds(t1);
            // Start to caches synced, then to the first batch applied; the heap reading between is left out.
            out.put("first_apply_seconds", synced + apply);
            out.put("compile_and_apply_seconds", apply);
            out.put("local_pods", backend.state().pods().size());
            out.put("policies", agent.policies());
            out.put("total_heap_bytes", heapAfterGc() - baseline);
            agent.close();
            source.close();
        }
        out.put("rss_bytes", rss());
        System.out.println("RESULT " + new Gson().toJson(out));
        System.exit(0);
    }

    private static double seconds(long since) {
        return (System.nanoTime() - since) / 1e9;
    }

    /** Looks every 10 ms: the wait is the measurement (the time to a synced cache). */
    private static void await(BooleanSupplier done) {
        Await.value(Duration.ofHours(1), Duration.ofMillis(10), "the informers", () -> done.getAsBoolean() ? Optional.of(true) : Optional.empty(), () -> "");
    }

    /** Heap in use after full collections, settled: what stays reachable. */
    private static long heapAfterGc() throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 6; i++) {
            System.gc();
            Thread.sleep(200);
            used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    private static long rss() throws java.io.IOException {
        return io.npmagent.pipelines.bench.ProcFiles.statusBytes(ProcessHandle.current().pid(), "VmRSS:");
    }
}
