package io.npmagent.pipelines.swarm;

import io.fabric8.kubernetes.api.model.ContainerStateBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.PodResource;
import io.npmagent.pipelines.bench.BenchApiServer;
import io.npmagent.pipelines.bench.BenchCluster;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * The load generator: pods' lives as a ReplicaSet and the kubelets of fake Nodes play them, each write
 * stamped ({@link PodWrites}). A pod is created (the controller's write), its kubelet reports it running
 * with its address, then ready; later it is deleted gracefully (the controller), its kubelet reports the
 * container terminated and confirms the deletion with grace 0: six writes, seven watch events, a second
 * apart, each status write a GET and an update as the kubelet's status manager makes them. No kubelet
 * runs: the Nodes are objects, and the controller manager here runs no node lifecycle controller, so
 * nothing evicts their pods.
 */
final class PodLifecycles implements AutoCloseable {
    private static final Duration STEP = Duration.ofSeconds(1);
    private final KubernetesClient admin;
    private final int clusterPods;
    private final int nodes;
    private final PodWrites writes;
    /** Enough for a burst's 500 requests a second at 0.1 s each. */
    private static final int PARALLEL = 64;
    private final ScheduledExecutorService steps = Executors.newScheduledThreadPool(PARALLEL, r -> {
        Thread t = new Thread(r, "swarm-kubelet");
        t.setDaemon(true);
        return t;
    });
    private final ConcurrentLinkedQueue<CompletableFuture<?>> inFlight = new ConcurrentLinkedQueue<>();
    /** Pods that exist and may be deleted next: the cluster's own first, then those made here. */
    private final Deque<PodRef> live = new ArrayDeque<>();
    private int made;

    record PodRef(String namespace, String name) {}

    /**
     * @param clusterPods the pods the cluster was made with ({@link BenchCluster#pod}), the first to go
     * @param nodes       new pods go to Nodes {@code node-2} ... {@code node-(nodes+1)}
     */
    PodLifecycles(BenchApiServer api, int clusterPods, int nodes, PodWrites writes) throws java.io.IOException {
        this.admin = api.newAdmin(PARALLEL);
        this.clusterPods = clusterPods;
        this.nodes = Math.max(1, nodes);
        this.writes = writes;
        int every = Math.max(1, clusterPods / BenchCluster.LOCAL_PODS);
        for (int i = 0; i < clusterPods; i++) {
            // The measured agent's own pods stay: they have interfaces on its node.
            if (i % every != 0) {
                Pod p = BenchCluster.pod(i, "", "");
                live.add(new PodRef(p.getMetadata().getNamespace(), p.getMetadata().getName()));
            }
        }
    }

    /** For {@code length}: {@code perSecond} pods created and as many deleted, each with its kubelet's writes (20 operations a second: 10). */
    void churn(double perSecond, Duration length) throws InterruptedException {
        paced(perSecond, length, true);
    }

    /** For {@code length}: {@code perSecond} pods created, none deleted. */
    void burst(double perSecond, Duration length) throws InterruptedException {
        paced(perSecond, length, false);
    }

    /** Deletes, at {@code perSecond}, the pods made here since {@code count} were: what a burst leaves. */
    void deleteNewest(int count, double perSecond) throws InterruptedException {
        long period = (long) (1e9 / perSecond);
        long next = System.nanoTime();
        for (int i = 0; i < count; i++) {
            PodRef p;
            synchronized (live) {
                p = live.pollLast();
            }
            if (p == null) {
                break;
            }
            delete(p);
            next += period;
            sleepUntil(next);
        }
    }

    PodWrites writes() {
        return writes;
    }

    /** Pods created here so far. */
    int made() {
        return made;
    }

    private void paced(double perSecond, Duration length, boolean alsoDelete) throws InterruptedException {
        long period = (long) (1e9 / perSecond);
        long end = System.nanoTime() + length.toNanos();
        long next = System.nanoTime();
        while (next < end) {
            create();
            if (alsoDelete) {
                PodRef p;
                synchronized (live) {
                    p = live.pollFirst();
                }
                if (p != null) {
                    delete(p);
                }
            }
            next += period;
            sleepUntil(next);
        }
    }

    /** Waits until every pod's writes begun so far are done. */
    void settle() {
        CompletableFuture<?> f;
        while ((f = inFlight.poll()) != null) {
            try {
                f.join();
            } catch (java.util.concurrent.CompletionException | java.util.concurrent.CancellationException e) {
                // counted by PodWrites as it failed; the pod's later writes were not made
            }
        }
    }

    private static void sleepUntil(long nanos) throws InterruptedException {
        long wait = nanos - System.nanoTime();
        if (wait > 0) {
            TimeUnit.NANOSECONDS.sleep(wait);
        }
    }

    private void create() {
        int n = made++;
        int i = n % clusterPods;
        String ip = "10.64." + ((n >> 8) & 255) + "." + (n & 255);
        String name = "swarm-" + n;
        Pod pod = BenchCluster.pod(i, "node-" + (2 + n % nodes), ip);
        // What the kubelet will report; the controller's create carries no status.
        var running = pod.getStatus();
        pod.getMetadata().setName(name);
        pod.getMetadata().setOwnerReferences(null);
        pod.getMetadata().setManagedFields(null);
        pod.setStatus(null);
        String ns = pod.getMetadata().getNamespace();
        PodResource r = admin.pods().inNamespace(ns).withName(name);
        CompletableFuture<Void> life = step(name, () -> admin.resource(pod).create(), Duration.ZERO)
                .thenCompose(x -> step(name, () -> status(r, s -> {
                    s.setStatus(running);
                    ready(s, false);
                    return s;
                }), STEP))
                .thenCompose(x -> step(name, () -> status(r, s -> {
                    ready(s, true);
                    return s;
                }), STEP))
                .thenRun(() -> {
                    synchronized (live) {
                        live.addLast(new PodRef(ns, name));
                    }
                });
        inFlight.add(life);
    }

    private void delete(PodRef p) {
        PodResource r = admin.pods().inNamespace(p.namespace()).withName(p.name());
        CompletableFuture<Void> end = step(p.name(), () -> r.withGracePeriod(30).delete(), Duration.ZERO)
                .thenCompose(x -> step(p.name(), () -> status(r, s -> {
                    ready(s, false);
                    s.getStatus().getContainerStatuses().forEach(c -> c.setState(new ContainerStateBuilder().withNewTerminated()
                            .withExitCode(0).withReason("Completed").endTerminated().build()));
                    return s;
                }), STEP))
                // The kubelet's confirmation is two events: the grace period cut to 0 (MODIFIED), then DELETED.
                .thenCompose(x -> step(p.name(), () -> r.withGracePeriod(0).delete(), STEP, 2));
        inFlight.add(end);
    }

    /** The kubelet's status write: the pod as the server has it now, changed, written back (a conflict is read and written again). */
    private Object status(PodResource r, UnaryOperator<Pod> change) {
        for (int attempt = 0; ; attempt++) {
            Pod now = r.get();
            try {
                return admin.resource(change.apply(now)).updateStatus();
            } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
                if (e.getCode() != 409 || attempt > 5) {
                    throw e;
                }
            }
        }
    }

    private static void ready(Pod pod, boolean ready) {
        for (PodCondition c : pod.getStatus().getConditions()) {
            if (c.getType().equals("Ready") || c.getType().equals("ContainersReady")) {
                c.setStatus(ready ? "True" : "False");
            }
        }
        pod.getStatus().getContainerStatuses().forEach(c -> c.setReady(ready));
    }

    private CompletableFuture<Void> step(String pod, Runnable write, Duration after) {
        return step(pod, write, after, 1);
    }

    /** One write, {@code after} the pod's last, stamped when sent (once per watch event it makes) and timed until acknowledged. */
    private CompletableFuture<Void> step(String pod, Runnable write, Duration after, int events) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        steps.schedule(() -> {
            long t0 = System.nanoTime();
            for (int e = 0; e < events; e++) {
                writes.sent(pod, t0);
            }
            try {
                write.run();
                writes.acknowledged((System.nanoTime() - t0) / 1e9);
                done.complete(null);
            } catch (RuntimeException e) {
                writes.failed();
                done.completeExceptionally(e);
            }
        }, after.toNanos(), TimeUnit.NANOSECONDS);
        return done;
    }

    @Override
    public void close() {
        steps.shutdownNow();
        admin.close();
    }
}
