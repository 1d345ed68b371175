package io.npmagent.pipelines.scale;

import com.google.gson.JsonObject;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.npmagent.pipelines.bench.PromText;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One run of a scenario on one backend in one queue mode, through the whole agent: {@code npm-agent run}
 * as a process of its own against the scenario's {@link LiveCluster} (a real control plane: etcd,
 * kube-apiserver, kube-controller-manager), enforcing on a node of network namespaces made for this run.
 * Phases, each announced on {@code out}: the node, the agent's boot until /readyz (the first full apply),
 * for npm640 the creation of its 640 policies (timed until all are in the kernel), the events (churn,
 * edits and probe flips, the agent watched every second), convergence, and the readings (histograms,
 * heap after a full collection and its class histogram, RSS, CPU).
 *
 * <p>The event phase lasts the scenario's time and at least until {@code minFlips} probe flips are
 * timed, so a p99 is the 99th of at least that many samples; if that takes longer than
 * {@link #FLIPS_LIMIT}, the run stops short and the result says how many flips it got.
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
    static final Duration FLIPS_LIMIT = Duration.ofMinutes(10);

    private final LiveCluster cluster;
    private final ScaleScenario s;
    private final String backend;
    private final QueueMode mode;
    private final int run;
    private final int minFlips;
    private final PrintStream out;
    private final Path dir;
    private final Path logs;

    /**
     * @param run      which repeat this is (1, 2, ...)
     * @param minFlips probe flips to time at least
     * @param logs     where the agent's log, GC log and class histogram are kept
     */
    AgentScaleRun(LiveCluster cluster, String backend, QueueMode mode, int run, int minFlips, PrintStream out, Path logs) throws IOException {
        this.cluster = cluster;
        this.s = cluster.scenario;
        this.backend = backend;
        this.mode = mode;
        this.run = run;
        this.minFlips = minFlips;
        this.out = out;
        this.logs = logs;
        this.dir = Files.createTempDirectory("npm-scale-run-");
    }

    AgentScaleResult run() throws Exception {
        String tag = String.format(Locale.ROOT, "[%s %s %s #%d]", s.name(), backend, mode.label(), run);
        String name = "sc" + ProcessHandle.current().pid() % 100000;
        try {
            cluster.reset();
            progress(tag, "node: %d pod interfaces and two probe pods", cluster.localPods.size());
            try (ScaleNode node = new ScaleNode(name, cluster.localPods, ScaleCluster.CLIENT_IP, ScaleCluster.SERVER_IP)) {
                long t0 = System.nanoTime();
                String logName = "agent-" + s.name() + "-" + backend + "-" + mode.label() + "-" + run;
                try (AgentProcess agent = new AgentProcess(dir, logs, logName, cluster.api.agentKubeconfig(), ScaleCluster.NODE, node.netns(),
                        node.bpffs(), backend, mode.settings, AgentProcess.DAEMONSET_JVM)) {
                    progress(tag, "boot: the agent lists the cluster and applies it whole");
                    agent.await(agent::ready, BOOT_LIMIT, "/readyz");
                    double firstApply = (System.nanoTime() - t0) / 1e9;
                    var startup = PromText.samples(agent.metrics(), "npm_startup_seconds");
                    double listed = startup.getOrDefault("{phase=\"list\"}", Double.NaN);
                    double compiled = startup.getOrDefault("{phase=\"compile_and_apply\"}", Double.NaN);
                    progress(tag, "ready after %.2f s: the list %.2f s, compile and apply %.2f s", firstApply, listed, compiled);
                    agent.await(() -> node.connects(ScaleCluster.SERVER_IP, Duration.ofMillis(200)), Duration.ofSeconds(30),
                            "the probe policy to admit the client");
                    try {
                        AgentScaleResult.Npm640Time npm640 = s.npm640() ? createNpm640(tag, agent) : AgentScaleResult.Npm640Time.NONE;
                        return events(tag, node, agent, new AgentScaleResult.Boot(firstApply, listed, compiled), npm640);
                    } catch (FellBehind e) {
                        throw e.after(firstApply);
                    }
                }
            }
        } finally {
            deleteDir();
        }
    }

    /**
     * NPM's measurement: its 640 policies created through the API while the agent runs (16 requests at a
     * time), timed from the first create until the agent has every one in the kernel and nothing waits.
     */
    private AgentScaleResult.Npm640Time createNpm640(String tag, AgentProcess agent) throws InterruptedException {
        double before = policiesInKernel(agent);
        progress(tag, "npm640: creating %d policies through the API (%,.0f in the kernel now)", s.policies(), before);
        long t0 = System.nanoTime();
        ScaleCluster.npm640Policies(s).forEach(cluster.api::create);
        cluster.api.flush();
        double created = (System.nanoTime() - t0) / 1e9;
        agent.await(() -> policiesInKernel(agent) >= before + s.policies() && converged(agent), CONVERGE_LIMIT,
                "the agent to apply npm640's policies");
        double total = (System.nanoTime() - t0) / 1e9;
        progress(tag, "npm640: all %d in the kernel %.3f s after the first create (the API took %.3f s to create them, the agent's tail %.3f s)",
                s.policies(), total, created, total - created);
        return new AgentScaleResult.Npm640Time(created, total);
    }

    private static double policiesInKernel(AgentProcess agent) {
        return PromText.total(agent.metrics(), "npm_num_policies");
    }

    private AgentScaleResult events(String tag, ScaleNode node, AgentProcess agent, AgentScaleResult.Boot boot, AgentScaleResult.Npm640Time npm640)
            throws Exception {
        KubernetesClient kube = cluster.api.admin();
        String before = agent.metrics();
        double cpuBefore = agent.cpuSeconds();
        progress(tag, "events: %d s (and at least %d probe flips) of %.0f pod creates and deletes/s, %.0f policy edits/s", s.events().toSeconds(),
                minFlips, s.podChurnPerSecond(), s.policyEditsPerSecond());
        AtomicInteger writes = new AtomicInteger();
        AtomicReference<Throwable> writeFailure = new AtomicReference<>();
        ScheduledExecutorService writers = Executors.newScheduledThreadPool(3);
        if (s.policyEditsPerSecond() > 0) {
            writers.scheduleAtFixedRate(guard(writeFailure, () -> {
                int n = cluster.edits.getAndIncrement();
                kube.resource(ScaleCluster.edited(s, n % s.policies(), 1 + n / s.policies())).update();
                writes.incrementAndGet();
            }), 0, (long) (1e6 / s.policyEditsPerSecond()), TimeUnit.MICROSECONDS);
        }
        // Churn's writes go out on threads of their own: a real API server answers a pod create, its status
        // and a delete in milliseconds each, and one thread would fall short of the scenario's rate.
        ExecutorService churners = Executors.newFixedThreadPool(8);
        if (s.podChurnPerSecond() > 0) {
            writers.scheduleAtFixedRate(() -> churners.submit(guard(writeFailure, () -> {
                int n = cluster.churned.getAndIncrement();
                cluster.api.createPod(ScaleCluster.churnPod(s, n));
                if (n >= 100) { // a steady state of 100 churned pods: each create is followed by a delete
                    // grace 0: the pods' nodes do not exist, so no kubelet would confirm a graceful delete
                    kube.resource(ScaleCluster.churnPod(s, n - 100)).withGracePeriod(0).delete();
                    writes.incrementAndGet();
                }
                writes.incrementAndGet();
            })), 0, (long) (1e6 / s.podChurnPerSecond()), TimeUnit.MICROSECONDS);
        }
        List<Double> probes = new ArrayList<>();
        long t0 = System.nanoTime();
        long end = t0 + s.events().toNanos();
        long limit = t0 + Math.max(s.events().toNanos(), FLIPS_LIMIT.toNanos());
        // Flips come at random gaps, so they fall at every phase of a fixed-interval queue's timer.
        Random gaps = new Random(run);
        int behind = 0;
        long nextWatch = System.nanoTime();
        boolean open = true;
        try {
            while ((System.nanoTime() < end || probes.size() < minFlips) && System.nanoTime() < limit) {
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
                Thread.sleep(100 + gaps.nextInt(201));
            }
        } finally {
            writers.shutdownNow();
            writers.awaitTermination(30, TimeUnit.SECONDS);
            churners.shutdownNow();
            churners.awaitTermination(30, TimeUnit.SECONDS);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        String shortfall = probes.size() >= minFlips ? null : String.format(Locale.ROOT,
                "%d flips, not %d: the event phase stops after %d s", probes.size(), minFlips, FLIPS_LIMIT.toSeconds());
        progress(tag, "converging after %,d API writes and %d probe flips in %.0f s", writes.get(), probes.size(), seconds);
        agent.await(() -> converged(agent), CONVERGE_LIMIT, "the agent to apply every change");
        String after = agent.metrics();
        double cpu = agent.cpuSeconds() - cpuBefore;
        long heap = agent.heapAfterGc();
        long rss = agent.rssBytes();
        agent.classHistogram(logs.resolve("agent-" + s.name() + "-" + backend + "-" + mode.label() + "-" + run + ".histo.txt"));
        TreeMap<Double, Double> delay = PromText.growth(PromText.buckets(before, "npm_policy_apply_delay_seconds"),
                PromText.buckets(after, "npm_policy_apply_delay_seconds"));
        TreeMap<Double, Double> write = PromText.growth(PromText.buckets(before, writeHistogram()), PromText.buckets(after, writeHistogram()));
        double batches = PromText.total(after, "npm_apply_latency_seconds_count") - PromText.total(before, "npm_apply_latency_seconds_count");
        double backendWrites = PromText.total(after, writeHistogram() + "_count") - PromText.total(before, writeHistogram() + "_count");
        AgentScaleResult r = new AgentScaleResult(s.name(), backend, mode.label(), run, s.pods(), s.policies(), boot, npm640,
                new AgentScaleResult.Latency(probes), PromText.quantile(delay, 0.50), PromText.quantile(delay, 0.99), PromText.quantile(write, 0.99),
                batches / seconds, backendWrites / seconds, heap, rss, cpu, writes.get() + probes.size(), seconds, shortfall, null, cluster.creation);
        AgentScaleResult.Latency l = r.probes();
        progress(tag, "done: %d flips, probe p50 %.3f s, p90 %.3f s, p99 %.3f s, max %.3f s; agent p99 %.3f s; %.1f batches/s, %.1f writes/s; "
                + "heap %d MiB, RSS %d MiB, %.1f CPU s%s", l.count(), l.p50(), l.p90(), l.p99(), l.max(), r.agentP99Seconds(), r.batchesPerSecond(),
                r.writesPerSecond(), heap >> 20, rss >> 20, cpu, shortfall == null ? "" : "; " + shortfall);
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
        if (!Files.exists(dir)) {
            return;
        }
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
