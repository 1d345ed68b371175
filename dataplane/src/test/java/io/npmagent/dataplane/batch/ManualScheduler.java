package io.npmagent.dataplane.batch;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** A {@link FlushScheduler} that runs nothing by itself: tests see what was asked and run it by hand. */
public final class ManualScheduler implements FlushScheduler {
    private final List<Runnable> soon = new ArrayList<>();
    private Duration period;
    private Runnable periodic;

    @Override
    public synchronized void every(Duration period, Runnable task) {
        this.period = period;
        this.periodic = task;
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

    /** Runs the periodic task once, as if its period had passed. */
    public void tick() {
        Runnable task;
        synchronized (this) {
            task = periodic;
        }
        task.run();
    }

    public synchronized Duration period() {
        return period;
    }

    @Override
    public void close() {}
}
