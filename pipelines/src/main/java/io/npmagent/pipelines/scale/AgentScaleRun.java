package io.npmagent.pipelines.scale;

import com.google.gson.JsonObject;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.npmagent.pipelines.bench.BenchApiServer;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One scenario on one backend, background batching on or off, through the whole agent: the cluster in
 * a real control plane (etcd, kube-apiserver, kube-controller-manager) holding the cluster, {@code npm-agent run} as a process of its own against it, enforcing on a
 * node of network namespaces. Phases, each announced on {@code out}: the cluster, the node, the agent's
 * boot until /readyz (the first full apply), the events (churn, edits and probe flips at their rates, the
 * agent watched every second), convergence, and the readings (histograms, heap after a full collection,
 * RSS, CPU).
 *
 * <p>The agent falls behind when its queues keep growing: more than {@link #BEHIND_PENDING} policy
 * changes waiting for the backend, or {@link #BEHIND_EVENTS} informer events waiting for the compiler,
 * for {@link #BEHIND_SECONDS} seconds in a row; the run stops and says so, rather than waiting for a
 * queue that does not drain. A probe flip not enforced within 30 s stops it too.
 */
final class AgentScaleRun {
    static final int BEHIND_PENDING = 1_000;
    static final int BEHIND_EVENTS = 1_000;
    static final int BEHIND_SECONDS = 15;
    private static final Duration BOOT_LIMIT = Duration.ofMinutes(10);
    private static final Duration CONVERGE_LIMIT = Duration.ofMinutes(2);
    private static final Duration FLIP_LIMIT = Duration.ofSeconds(30);

    private final ScaleScenario s;
    private final String backend;
    private final boolean background;
    private final PrintStream out;
    private final Path dir;
    private final Path logs;
    private AgentScaleResult.ClusterCost creation;

    /** @param logs where the agent's log and GC log are kept */
    AgentScaleRun(ScaleScenario s, String backend, boolean background, PrintStream out, Path logs) throws IOException {
        this.logs = logs;
        this.s = s;
        this.backend = backend;
        this.background = background;
        this.out = out;
        this.dir = Files.createTempDirectory("npm-scale-");
    }

    AgentScaleResult run() throws Exception {
        String tag = String.format(Locale.ROOT, "[%s %s %s]", s.name(), backend, background ? "background" : "foreground");
        String name = "sc" + ProcessHandle.current().pid() % 100000;
        try (BenchApiServer api = BenchApiServer.start(dir.resolve("cluster"))) {
            progress(tag, "cluster: %,d pods (%,d on this node), %,d policies, created through kube-apiserver %s", s.pods(), s.localPods(),
                    s.policies(), api.controlPlane().version());
            long c0 = System.nanoTime();
            List<String> local = ScaleCluster.preload(api, s);
            creation = new AgentScaleResult.ClusterCost((System.nanoTime() - c0) / 1e9, api.created(), api.rss("kube-apiserver"), api.rss("etcd"));
            progress(tag, "created %,d objects in %.1f s; kube-apiserver RSS %d MiB, etcd RSS %d MiB", creation.objects(), creation.seconds(),
                    creation.apiServerRss() >> 20, creation.etcdRss() >> 20);
            progress(tag, "node: %d pod interfaces and two probe pods", local.size());
            try (ScaleNode node = new ScaleNode(name, local, ScaleCluster.CLIENT_IP, ScaleCluster.SERVER_IP)) {
                long t0 = System.nanoTime();
                String logName = "agent-" + s.name() + "-" + backend + (background ? "-background" : "-foreground");
                try (AgentProcess agent = new AgentProcess(dir, logs, logName, api.agentKubeconfig(), ScaleCluster.NODE, node.netns(), node.bpffs(),
                        backend, background, AgentProcess.daemonSetJvm(s.pods()))) {
                    progress(tag, "boot: the agent lists the cluster and applies it whole");
                    agent.await(agent::ready, BOOT_LIMIT, "/readyz");
                    double firstApply = (System.nanoTime() - t0) / 1e9;
                    progress(tag, "ready after %.2f s", firstApply);
                    agent.await(() -> node.connects(ScaleCluster.SERVER_IP, Duration.ofMillis(200)), Duration.ofSeconds(30),
                            "the probe policy to admit the client");
                    try {
                        return events(tag, api, node, agent, firstApply);
                    } catch (FellBehind e) {
                        throw e.after(firstApply);
                    }
                }
            }
        } finally {
            deleteDir();
        }
    }

    private AgentScaleResult events(String tag, BenchApiServer api, ScaleNode node, AgentProcess agent, double firstApply)
            throws Exception {
        KubernetesClient kube = api.admin();
        String before = agent.metrics();
        double cpuBefore = agent.cpuSeconds();
        progress(tag, "events: %d s of %.0f pod creates and deletes/s, %.0f policy edits/s, a probe flip/s", s.events().toSeconds(),
                s.podChurnPerSecond(), s.policyEditsPerSecond());
        AtomicInteger writes = new AtomicInteger();
        AtomicReference<Throwable> writeFailure = new AtomicReference<>();
        ScheduledExecutorService writers = Executors.newScheduledThreadPool(3);
        if (s.policyEditsPerSecond() > 0) {
            AtomicInteger edit = new AtomicInteger();
            writers.scheduleAtFixedRate(guard(writeFailure, () -> {
                int n = edit.getAndIncrement();
                kube.resource(ScaleCluster.edited(s, n % s.policies(), 1 + n / s.policies())).update();
                writes.incrementAndGet();
            }), 0, (long) (1e6 / s.policyEditsPerSecond()), TimeUnit.MICROSECONDS);
        }
        // Churn's writes go out on threads of their own: a real API server answers a pod create, its status
        // and a delete in milliseconds each, and one thread would fall short of the scenario's rate.
        ExecutorService churners = Executors.newFixedThreadPool(8);
        if (s.podChurnPerSecond() > 0) {
            AtomicInteger created = new AtomicInteger();
            writers.scheduleAtFixedRate(() -> churners.submit(guard(writeFailure, () -> {
                int n = created.getAndIncrement();
                api.createPod(ScaleCluster.churnPod(s, n));
                if (n >= 100) { // a steady state of 100 churned pods: each create is followed by a delete
                    // grace 0: the pods' nodes do not exist, so no kubelet would confirm a graceful delete
                    kube.resource(ScaleCluster.churnPod(s, n - 100)).withGracePeriod(0).delete();
                    writes.incrementAndGet();
                }
                writes.incrementAndGet();
            })), 0, (long) (1e6 / s.podChurnPerSecond()), TimeUnit.MICROSECONDS);
        }
        List<Double> probes = new ArrayList<>();
        long end = System.nanoTime() + s.events().toNanos();
        int behind = 0;
        long nextWatch = System.nanoTime();
        boolean open = true;
        try {
            while (System.nanoTime() < end) {
                open = !open;
                probes.add(flip(kube, node, agent, open));
                if (writeFailure.get() != null) {
                    throw new IllegalStateException("an API write failed", writeFailure.get());
                }
                if (System.nanoTime() >= nextWatch) {
                    nextWatch = System.nanoTime() + 1_000_000_000L;
                    int pending = pending(agent);
                    double backlog = PromText.samples(agent.metrics(), "npm_pending_events").getOrDefault("", 0.0);
                    behind = pending > BEHIND_PENDING || backlog > BEHIND_EVENTS ? behind + 1 : 0;
                    if (behind >= BEHIND_SECONDS) {
                        throw new FellBehind(String.format(Locale.ROOT, "the agent fell behind: %,d policy changes and %,.0f events waiting, for %d s",
                                pending, backlog, behind));
                    }
                }
                Thread.sleep(Math.max(0, 1000 - (long) (probes.get(probes.size() - 1) * 1000)));
            }
        } finally {
            writers.shutdownNow();
            writers.awaitTermination(30, TimeUnit.SECONDS);
            churners.shutdownNow();
            churners.awaitTermination(30, TimeUnit.SECONDS);
        }
        progress(tag, "converging after %,d API writes and %d probe flips", writes.get(), probes.size());
        agent.await(() -> converged(agent), CONVERGE_LIMIT, "the agent to apply every change");
        String after = agent.metrics();
        double cpu = agent.cpuSeconds() - cpuBefore;
        long heap = agent.heapAfterGc();
        long rss = agent.rssBytes();
        TreeMap<Double, Double> delay = PromText.growth(PromText.buckets(before, "npm_policy_apply_delay_seconds"),
                PromText.buckets(after, "npm_policy_apply_delay_seconds"));
        TreeMap<Double, Double> write = PromText.growth(PromText.buckets(before, writeHistogram()), PromText.buckets(after, writeHistogram()));
        List<Double> sorted = new ArrayList<>(probes);
        Collections.sort(sorted);
        AgentScaleResult r = new AgentScaleResult(s.name(), backend, background, s.pods(), s.policies(), firstApply,
                Npm640.percentile(sorted, 0.50), Npm640.percentile(sorted, 0.99), sorted.get(sorted.size() - 1),
                PromText.quantile(delay, 0.50), PromText.quantile(delay, 0.99), PromText.quantile(write, 0.99), heap, rss, cpu,
                writes.get() + probes.size(), probes, null, creation);
        progress(tag, "done: probe p50 %.3f s, p99 %.3f s, max %.3f s; agent p99 %.3f s; heap %d MiB, RSS %d MiB, %.1f CPU s",
                r.p50Seconds(), r.p99Seconds(), r.maxSeconds(), r.agentP99Seconds(), heap >> 20, rss >> 20, cpu);
        return r;
    }

    /**
     * Flips the probe policy and times, with packets, from the API server's acknowledgement of the write
     * (the change exists from then on; the API server's own write time, which grows with the objects it
     * scans, is not the agent's) until the client's connects answer the new way.
     */
    private double flip(KubernetesClient kube, ScaleNode node, AgentProcess agent, boolean open) throws InterruptedException {
        kube.resource(ScaleCluster.probePolicy(open)).update();
        long t0 = System.nanoTime();
        long limit = t0 + FLIP_LIMIT.toNanos();
        // An allowed connect to a pod on this node answers in well under a millisecond; 20 ms of silence is a drop.
        while (node.connects(ScaleCluster.SERVER_IP, Duration.ofMillis(20)) != open) {
            if (System.nanoTime() > limit) {
                throw new FellBehind("the probe policy's flip to " + (open ? "open" : "closed") + " was not enforced in "
                        + FLIP_LIMIT.toSeconds() + " s\nagent log:\n" + agent.logTail());
            }
            if (!agent.alive()) {
                throw new IllegalStateException("the agent exited:\n" + agent.logTail());
            }
        }
        return (System.nanoTime() - t0) / 1e9;
    }

    private static boolean converged(AgentProcess agent) {
        JsonObject state = agent.state();
        if (state == null) {
            return false;
        }
        JsonObject status = state.getAsJsonObject("status");
        return state.get("pendingPolicies").getAsInt() == 0 && status.get("appliedGeneration").getAsLong() == status.get("seenGeneration").getAsLong()
                && status.getAsJsonArray("failures").isEmpty();
    }

    private static int pending(AgentProcess agent) {
        JsonObject state = agent.state();
        return state == null ? 0 : state.get("pendingPolicies").getAsInt();
    }

    /** The backend's own write latency: one restore transaction, or one batched map write. */
    private String writeHistogram() {
        return switch (backend) {
            case "bpf" -> "npm_bpf_map_update_latency_seconds";
            case "nft" -> "npm_nft_restore_latency_seconds";
            default -> "npm_linux_iptables_restore_latency_seconds";
        };
    }

    private void progress(String tag, String format, Object... args) {
        out.printf(Locale.ROOT, "%s %s%n", tag, String.format(Locale.ROOT, format, args));
        out.flush();
    }

    private static Runnable guard(AtomicReference<Throwable> failure, Runnable write) {
        return () -> {
            try {
                write.run();
            } catch (RuntimeException e) {
                failure.compareAndSet(null, e);
            }
        };
    }

    private void deleteDir() throws IOException {
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    /** The agent could not keep up: the run stops and says so. */
    static final class FellBehind extends RuntimeException {
        /** The boot's time to first apply, if it got that far (NaN if not). */
        final double firstApplySeconds;

        FellBehind(String message) {
            this(message, Double.NaN);
        }

        private FellBehind(String message, double firstApplySeconds) {
            super(message);
            this.firstApplySeconds = firstApplySeconds;
        }

        FellBehind after(double firstApply) {
            return new FellBehind(getMessage(), firstApply);
        }
    }
}
