package io.npmagent.pipelines.swarm;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * N agent-shaped watchers ({@link Watcher}), of which the first few also time every pod event: starting
 * them, restarting them all at once or in batches as a DaemonSet rollout does, pausing some, and waiting
 * until every one is in sync again.
 */
final class Swarm implements Fleet {
    private final List<Watcher> watchers = new ArrayList<>();
    private final ExecutorService executor;
    private final ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "swarm-retries"));
    final SwarmStats stats = new SwarmStats();

    /** @param timed how many of the {@code n} watchers note when each pod event arrives */
    Swarm(ApiAccess api, AgentRequests requests, int n, int timed) {
        this.executor = Executors.newFixedThreadPool(Math.max(2, Math.min(8, n / 50 + 2)), r -> daemon(r, "swarm-io"));
        for (int i = 0; i < n; i++) {
            watchers.add(new Watcher(api, requests, executor, retries, stats, i < timed ? new DeliveryLog() : null));
        }
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    @Override
    public SwarmStats.Snapshot read() {
        return stats.snapshot();
    }

    @Override
    public int size() {
        return watchers.size();
    }

    @Override
    public List<DeliveryLog> timingLogs() {
        return watchers.stream().map(Watcher::timing).filter(t -> t != null).toList();
    }

    /** Starts every watcher at once (a new cluster's DaemonSet, or a restart storm) and returns when all are in sync. */
    @Override
    public Duration startAll(Duration limit) throws InterruptedException {
        return restartBatch(watchers, Watcher::start, limit);
    }

    /** Every agent restarting at once. */
    @Override
    public Duration restartAll(Duration limit) throws InterruptedException {
        return restartBatch(watchers, Watcher::restart, limit);
    }

    /**
     * A rollout: the watchers restarted {@code fraction} at a time, each batch once the last is in sync
     * (as a DaemonSet's maxUnavailable lets it); returns how long the whole rollout took.
     */
    @Override
    public Duration rollout(double fraction, Duration limit) throws InterruptedException {
        int batch = Math.max(1, (int) Math.ceil(watchers.size() * fraction));
        long t0 = System.nanoTime();
        for (int from = 0; from < watchers.size(); from += batch) {
            restartBatch(watchers.subList(from, Math.min(watchers.size(), from + batch)), Watcher::restart, limit);
        }
        return Duration.ofNanos(System.nanoTime() - t0);
    }

    private Duration restartBatch(List<Watcher> batch, Consumer<Watcher> how, Duration limit) throws InterruptedException {
        long t0 = System.nanoTime();
        batch.forEach(how);
        long end = t0 + limit.toNanos();
        while (!batch.stream().allMatch(Watcher::inSync)) {
            if (System.nanoTime() > end) {
                long behind = batch.stream().filter(w -> !w.inSync()).count();
                throw new IllegalStateException(behind + " of " + batch.size() + " watchers not in sync after " + limit.toSeconds()
                        + " s; the swarm's failed requests so far: " + stats.failures());
            }
            Thread.sleep(20);
        }
        return Duration.ofNanos(System.nanoTime() - t0);
    }

    /** Stops reading on {@code fraction} of the watchers (the untimed ones first) for {@code pause}, as a GC pause would. */
    @Override
    public void pause(double fraction, Duration pause) throws InterruptedException {
        int n = (int) Math.round(watchers.size() * fraction);
        List<Watcher> paused = watchers.subList(watchers.size() - n, watchers.size());
        paused.forEach(Watcher::pause);
        Thread.sleep(pause.toMillis());
        paused.forEach(Watcher::resume);
    }

    @Override
    public void close() {
        watchers.forEach(Watcher::stop);
        retries.shutdownNow();
        executor.shutdownNow();
        try {
            executor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
