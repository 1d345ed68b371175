package io.npmagent.pipelines.bench;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.npmagent.harness.controlplane.AgentIdentity;
import io.npmagent.harness.controlplane.ControlPlane;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * A real control plane holding a benchmark's cluster: upstream etcd, kube-apiserver and
 * kube-controller-manager ({@link ControlPlane}), the shipped RBAC, and a token for the agent's
 * ServiceAccount. Objects are created through the API as any client would create them, 16 requests at
 * a time: a namespace waits for its default ServiceAccount (pods are admitted only then), a pod's status
 * is written after its create as kubelet writes it. What the creation cost is in the figures.
 */
public final class BenchApiServer implements AutoCloseable {
    private static final int PARALLEL = 16;
    private final ControlPlane cp;
    private final KubernetesClient admin;
    private final Path agentKubeconfig;
    private final ExecutorService pool = Executors.newFixedThreadPool(PARALLEL);
    private final List<Future<?>> pending = new ArrayList<>();
    private long created;

    private BenchApiServer(ControlPlane cp) throws IOException {
        this.cp = cp;
        AgentIdentity.applyRbac(cp.admin());
        this.agentKubeconfig = AgentIdentity.kubeconfig(cp);
        this.admin = newAdmin(PARALLEL * 2);
    }

    /** Another admin client, of its own connections, allowed {@code parallel} requests at once (its caller closes it). */
    public KubernetesClient newAdmin(int parallel) throws IOException {
        Config config = Config.fromKubeconfig(Files.readString(cp.adminKubeconfig()));
        config.setMaxConcurrentRequests(parallel);
        config.setMaxConcurrentRequestsPerHost(parallel);
        return new KubernetesClientBuilder().withConfig(config).build();
    }

    public static BenchApiServer start(Path dir) throws IOException {
        ControlPlane cp = ControlPlane.start(dir, "127.0.0.1");
        try {
            return new BenchApiServer(cp);
        } catch (IOException | RuntimeException e) {
            cp.close();
            throw e;
        }
    }

    /** Creates the object: a namespace at once (with its ServiceAccount), anything else in the background until {@link #flush}. */
    public void create(HasMetadata object) {
        created++;
        if (object instanceof Namespace ns) {
            admin.resource(ns).create();
            try {
                cp.awaitDefaultServiceAccount(ns.getMetadata().getName());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return;
        }
        pending.add(pool.submit(() -> {
            if (object instanceof Pod pod) {
                createPod(pod);
            } else {
                admin.resource(object).create();
            }
        }));
        if (pending.size() >= 4 * PARALLEL) {
            flush();
        }
    }

    /**
     * Creates a pod and writes its status (which a create ignores) as kubelet would. Owner references
     * are left out: their ReplicaSets do not exist here, and the garbage collector deletes a pod whose
     * owners are gone.
     */
    public void createPod(Pod pod) {
        PodStatus status = pod.getStatus();
        pod.getMetadata().setOwnerReferences(null);
        Pod made = admin.resource(pod).create();
        if (status != null) {
            made.setStatus(status);
            admin.resource(made).updateStatus();
        }
    }

    /** Waits until every create so far is done; the first failure is thrown. */
    public void flush() {
        try {
            for (Future<?> f : pending) {
                f.get();
            }
        } catch (Exception e) {
            throw new IllegalStateException("creating the benchmark's objects failed: " + e.getMessage(), e);
        } finally {
            pending.clear();
        }
    }

    /** Objects created through {@link #create}. */
    public long created() {
        return created;
    }

    public KubernetesClient admin() {
        return admin;
    }

    public ControlPlane controlPlane() {
        return cp;
    }

    /** The agent's kubeconfig (its ServiceAccount's token), as text. */
    public String agentKubeconfig() {
        try {
            return Files.readString(agentKubeconfig);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Resident memory of kube-apiserver and etcd now, in bytes: what the benchmark cluster costs the machine. */
    public long rss(String process) {
        return cp.pid(process).map(BenchApiServer::rssOf).orElse(0L);
    }

    private static long rssOf(long pid) {
        try {
            return Math.max(0, ProcFiles.statusBytes(pid, "VmRSS:"));
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
    }

    @Override
    public void close() {
        pool.shutdownNow();
        try {
            pool.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        admin.close();
        cp.close();
    }
}
