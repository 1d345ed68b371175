package io.npmagent.pipelines.scale;

import io.npmagent.agent.backend.Backends;
import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.bandwidth.BandwidthSettings;
import io.npmagent.dataplane.batch.BatchQueue;
import io.npmagent.dataplane.batch.FlushScheduler;
import io.npmagent.dataplane.batch.QueueConfig;
import io.npmagent.dataplane.batch.RetryPolicy;
import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.LabelSelector;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.ProcessRunner;
import io.npmagent.harness.node.Bpffs;
import io.npmagent.harness.node.NetworkNamespace;
import io.npmagent.harness.node.PodLink;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * NPM's background-batching scenario: {@code n} services of two pods each, one NetworkPolicy per
 * service selecting its pods and admitting TCP 80 from the next service's pods, over a background of
 * kube-proxy rules for the same services, in a network namespace of its own. The pods and namespace are
 * in place first (one batch, not timed); then the policies arrive as fast as the model can emit them,
 * and the clock runs until the last one is in the kernel.
 *
 * <p>Foreground: one transaction per policy event, in the submitting thread (NPM without
 * {@code NetPolInBackground}). Background: the queue's defaults (flush at 100 pending or every 500 ms).
 */
public final class Npm640 {
    private static final Duration GIVE_UP = Duration.ofMinutes(30);

    private Npm640() {}

    public static ScaleResult run(String backendName, boolean background, int services) {
        String netns = "npm640-" + ProcessHandle.current().pid() + "-" + backendName.replace("iptables-", "i") + (background ? "b" : "f");
        NetworkNamespace node = NetworkNamespace.create(netns);
        Path bpffs = null;
        try {
            ProcessRunner inside = node.runner();
            List<KubeProxyRules.Service> svc = new ArrayList<>();
            for (int i = 0; i < services; i++) {
                svc.add(new KubeProxyRules.Service("bench/svc-" + i, clusterIp(i), List.of(podIp(2 * i), podIp(2 * i + 1))));
            }
            String kubeProxyTool = backendName.equals("iptables-legacy") ? "iptables-legacy-restore" : "iptables-nft-restore";
            CommandResult bg = inside.run(List.of(kubeProxyTool), KubeProxyRules.restoreInput(svc), Duration.ofMinutes(5));
            if (!bg.ok()) {
                throw new IllegalStateException("cannot install the kube-proxy background: " + bg.errorSummary());
            }
            if (backendName.equals("bpf")) {
                // Never the host's /sys/fs/bpf.
                bpffs = Bpffs.mount(Path.of("/run/npm-agent", netns + "-bpffs"), "npm640");
                // An interface and a host route for each pod, as a routed CNI leaves them, so the eBPF backend
                // finds the pods and attaches its programs (in the untimed first batch), as on a node.
                PodLink.placeholders(node, "pod", IntStream.range(0, 2 * services).mapToObj(Npm640::podIp).toList());
            }

            Metrics metrics = new Metrics(new PrometheusRegistry());
            TimedBackend backend = new TimedBackend(Backends.create(backendName, new Backends.Placement(inside, netns, bpffs, null),
                    BandwidthSettings.DEFAULTS, metrics));
            PolicyCompiler compiler = new PolicyCompiler(null);
            FlushScheduler scheduler = FlushScheduler.singleThread("npm640-flush");
            QueueConfig config = background ? QueueConfig.DEFAULTS : QueueConfig.FOREGROUND;
            try (backend; BatchQueue queue = new BatchQueue(backend, config, RetryPolicy.DEFAULTS, InstantSource.system(), scheduler, metrics)) {
                compiler.apply(new ClusterEvent.NamespaceUpserted(new Namespace("bench", Map.of())));
                for (int k = 0; k < 2 * services; k++) {
                    compiler.apply(new ClusterEvent.PodUpserted(Pod.builder("bench", "svc-" + (k / 2) + "-" + (k % 2))
                            .labels(Map.of("app", "svc-" + (k / 2))).ip(podIp(k)).port("http", 80, Protocol.TCP).build()));
                }
                backend.apply(new Batch(DesiredDelta.of(compiler.snapshot())));
                backend.reconcile(); // as in an agent that has been running: its idle-time upkeep done
                backend.reset();

                List<Double> delays = Collections.synchronizedList(new ArrayList<>());
                queue.onEnforced(d -> delays.add(d.toNanos() / 1e9));
                queue.start();
                long start = System.nanoTime();
                for (int i = 0; i < services; i++) {
                    queue.submit(compiler.apply(new ClusterEvent.PolicyUpserted(policy(i, services))).delta());
                }
                waitUntilIdle(queue, start);
                double total = (System.nanoTime() - start) / 1e9;
                if (!queue.failures().isEmpty()) {
                    throw new IllegalStateException("parts were refused: " + queue.failures());
                }
                int drift = queue.reconcileNow();
                if (drift != 0) {
                    throw new IllegalStateException(drift + " kernel objects differed from the desired state after the run");
                }
                List<Double> sorted = new ArrayList<>(delays);
                Collections.sort(sorted);
                return new ScaleResult("npm640", backendName, background ? "background" : "foreground", services, total,
                        backend.longestSeconds(), percentile(sorted, 0.50), percentile(sorted, 0.99),
                        sorted.isEmpty() ? 0 : sorted.get(sorted.size() - 1), backend.transactions());
            }
        } finally {
            node.close();
            if (bpffs != null) {
                Bpffs.unmount(bpffs);
            }
        }
    }

    static NetworkPolicy policy(int i, int services) {
        return new NetworkPolicy("bench", "svc-" + i, LabelSelector.matchLabels(Map.of("app", "svc-" + i)), null,
                List.of(new NetworkPolicy.Rule(
                        List.of(new NetworkPolicy.Peer(LabelSelector.matchLabels(Map.of("app", "svc-" + ((i + 1) % services))), null, null)),
                        List.of(new NetworkPolicy.Port("TCP", NetworkPolicy.PortValue.number(80), null)))),
                null);
    }

    private static void waitUntilIdle(BatchQueue queue, long start) {
        while (!queue.idle()) {
            if (System.nanoTime() - start > GIVE_UP.toNanos()) {
                throw new IllegalStateException("the queue did not drain in " + GIVE_UP.toMinutes() + " minutes; "
                        + queue.pendingPolicies() + " policies pending");
            }
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
    }

    /** The Q quantile of SORTED (nearest rank), 0 when it is empty. */
    public static double percentile(List<Double> sorted, double q) {
        if (sorted.isEmpty()) {
            return 0;
        }
        int index = (int) Math.ceil(q * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
    }

    private static String podIp(int k) {
        return "10.128." + (k / 250) + "." + (k % 250 + 1);
    }

    private static String clusterIp(int i) {
        return "10.96." + (i / 250) + "." + (i % 250 + 1);
    }

}
