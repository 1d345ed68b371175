package io.npmagent.pipelines.swarm;

import io.npmagent.pipelines.bench.BenchApiServer;
import io.npmagent.pipelines.scale.AgentProcess;
import io.npmagent.pipelines.scale.ScaleNode;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One swarm size through the profiles, in order, on the same cluster and the same real agent: the swarm's
 * start (every watcher at once, as a new DaemonSet), idle, churn (pods created and deleted with their
 * kubelets' writes), churn with some watchers paused, a burst of creations and its deletion, a restart
 * storm (all at once) and a rollout (10% batches). Each profile is a pair of control-plane readings and
 * a row.
 */
final class SwarmRun {
    private static final Duration SYNC_LIMIT = Duration.ofMinutes(15);
    private static final Duration CATCH_UP = Duration.ofMinutes(2);
    /** What the fleet does, and which therefore means nothing with the real agent alone. */
    private static final List<String> FLEET_PROFILES = List.of("pause", "storm", "rollout");
    private final BenchApiServer api;
    private final AgentRequests requests;
    private final ScaleNode node;
    private final AgentProcess agent;
    private final PodLifecycles load;
    private final PodWrites writes;
    private final SwarmOptions options;
    private final PrintStream out;

    SwarmRun(BenchApiServer api, AgentRequests requests, ScaleNode node, AgentProcess agent, PodLifecycles load, PodWrites writes,
            SwarmOptions options, PrintStream out) {
        this.api = api;
        this.requests = requests;
        this.node = node;
        this.agent = agent;
        this.load = load;
        this.writes = writes;
        this.options = options;
        this.out = out;
    }

    /** {@code agents - 1} agent-shaped watchers beside the real agent, through every profile; each row added to {@code rows} as it is made. */
    void run(int agents, List<SwarmRow> rows) throws Exception {
        ApiAccess access = ApiAccess.fromKubeconfig(api.agentKubeconfig(), requests.userAgent());
        int watchers = agents - 1;
        try (Swarm swarm = new Swarm(access, requests, watchers, Math.min(watchers, options.timed()))) {
            run(agents, swarm, "watchers", options.profiles(), rows);
        } finally {
            // The swarm's connections close once its clients are collected (Java 17's HttpClient has no close).
            System.gc();
            Thread.sleep(3_000);
        }
    }

    /** Through {@code profiles} (after the fleet's start) with {@code fleet} beside the real agent; each row added to {@code rows}. */
    void run(int agents, Fleet fleet, String kind, List<String> profiles, List<SwarmRow> rows) throws Exception {
        progress(agents, "start: %d %s list and watch at once", fleet.size(), kind);
        rows.add(measure(agents, kind, "start", fleet, () -> fleet.startAll(SYNC_LIMIT).toNanos() / 1e9, false));
        for (String profile : profiles) {
            if (fleet.size() == 0 && FLEET_PROFILES.contains(profile)) {
                continue;
            }
            progress(agents, "%s", profile);
            rows.add(switch (profile) {
                case "idle" -> measure(agents, kind, profile, fleet, () -> {
                    Thread.sleep(options.length().toMillis());
                    return Double.NaN;
                }, false);
                case "churn" -> measure(agents, kind, profile, fleet, () -> {
                    load.churn(options.churnPerSecond(), options.length());
                    return Double.NaN;
                }, true);
                case "pause" -> measure(agents, kind, profile, fleet, () -> {
                    Thread pauser = new Thread(() -> {
                        try {
                            Thread.sleep(options.length().toMillis() / 4);
                            fleet.pause(options.pauseFraction(), options.pauseLength());
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    }, "swarm-pause");
                    pauser.start();
                    load.churn(options.churnPerSecond(), options.length());
                    pauser.join();
                    return Double.NaN;
                }, true);
                case "burst" -> {
                    int before = load.made();
                    rows.add(measure(agents, kind, profile, fleet, () -> {
                        load.burst(options.burstPerSecond(), options.burstLength());
                        return Double.NaN;
                    }, true));
                    int made = load.made() - before;
                    progress(agents, "burst-delete: the %d pods of the burst", made);
                    yield measure(agents, kind, "burst-delete", fleet, () -> {
                        load.deleteNewest(made, options.burstPerSecond());
                        return Double.NaN;
                    }, true);
                }
                case "storm" -> measure(agents, kind, profile, fleet, () -> fleet.restartAll(SYNC_LIMIT).toNanos() / 1e9, false);
                case "rollout" -> measure(agents, kind, profile, fleet, () -> fleet.rollout(0.1, SYNC_LIMIT).toNanos() / 1e9, false);
                default -> throw new IllegalArgumentException("unknown profile " + profile + " (" + SwarmOptions.PROFILES + ")");
            });
        }
    }

    interface Phase {
        /** Runs the profile; returns its sync time in seconds, or NaN. */
        double run() throws Exception;
    }

    private SwarmRow measure(int agents, String kind, String profile, Fleet fleet, Phase phase, boolean writing) throws Exception {
        load.settle();
        writes.clear();
        fleet.timingLogs().forEach(DeliveryLog::clear);
        SwarmStats.Snapshot s0 = fleet.read();
        ControlPlaneReading r0 = ControlPlaneReading.now(api);
        ProbeFlips flips = writing ? new ProbeFlips(api.admin(), node, agent) : null;
        double sync;
        List<Double> flipped = List.of();
        try {
            sync = phase.run();
            if (writing) {
                load.settle();
                // What was written last has a moment to arrive; a timing watcher that lags is waited for (up to
                // CATCH_UP), so that an update counted as missed is one that never came, not one still on its way.
                Thread.sleep(2_000);
                long until = System.nanoTime() + CATCH_UP.toNanos();
                while (writes.delivered(fleet.timingLogs()).missed() > 0 && System.nanoTime() < until) {
                    Thread.sleep(500);
                }
                flipped = flips.stop();
            }
        } finally {
            if (flips != null) {
                flips.close();
            }
        }
        ControlPlaneReading r1 = ControlPlaneReading.now(api);
        PodWrites.Delivery delivery = writing ? writes.delivered(fleet.timingLogs()) : null;
        SwarmRow row = new SwarmRow(agents, kind, options.pods(), profile, r0.until(r1), fleet.read().minus(s0), sync, delivery, flipped,
                writes.latencies(), writes.failures());
        out.println("  " + SwarmTable.line(row));
        return row;
    }

    private void progress(int agents, String format, Object... args) {
        out.printf(Locale.ROOT, "[swarm %d agents] %s%n", agents, String.format(Locale.ROOT, format, args));
    }
}
