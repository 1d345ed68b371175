package io.npmagent.dataplane.batch;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A {@link FlushScheduler} that runs nothing by itself: tests see what was asked and run it by hand. */
public final class ManualScheduler implements FlushScheduler {
    private final List<Runnable> soon = new ArrayList<>();
    private final Map<Duration, Runnable> periodic = new LinkedHashMap<>();

    @Override
    public synchronized Cancellable every(Duration period, Runnable task) {
        periodic.put(period, task);
        return () -> {
            synchronized (this) {
                periodic.remove(period, task);
            }
        };
    }

    @Override
    public synchronized void soon(Runnable task) {
        soon.add(task);
    }

    /** How many early flushes were asked for and not yet run. */
    public synchronized int requested() {
        return soon.size();
    }

    /** Runs the early flushes asked for. */
    public void runRequested() {
        List<Runnable> tasks;
        synchronized (this) {
            tasks = new ArrayList<>(soon);
            soon.clear();
        }
        tasks.forEach(Runnable::run);
    }

    /** Runs the periodic task of the first period registered once, as if that period had passed. */
    public void tick() {
        Runnable task;
        synchronized (this) {
            task = periodic.values().iterator().next();
        }
        task.run();
    }

    /** Runs the task registered for {@code period} once. */
    public void tick(Duration period) {
        Runnable task;
        synchronized (this) {
            task = periodic.get(period);
        }
        if (task == null) {
            throw new AssertionError("nothing runs every " + period + "; registered: " + periodic.keySet());
        }
        task.run();
    }

    /** The first period registered (the flush interval). */
    public synchronized Duration period() {
        return periodic.keySet().iterator().next();
    }

    @Override
    public void close() {}
}
