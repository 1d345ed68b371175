package io.npmagent.dataplane.batch;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Where background flushes run: one thread, so flushes never overlap. A seam so tests run flushes by
 * hand and never sleep.
 */
public interface FlushScheduler extends AutoCloseable {

    /** Run {@code task} every {@code period}, starting one period from now, until cancelled. */
    Cancellable every(Duration period, Runnable task);

    /** A periodic task's handle. */
    interface Cancellable {
        /** Runs of the task that have not started never will; one running finishes. */
        void cancel();
    }

    /** Run {@code task} soon, on the flush thread. */
    void soon(Runnable task);

    @Override
    void close();

    /** The real one: a single daemon thread. */
    static FlushScheduler singleThread(String name) {
        ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
        return new FlushScheduler() {
            @Override
            public Cancellable every(Duration period, Runnable task) {
                ScheduledFuture<?> f = executor.scheduleWithFixedDelay(task, period.toNanos(), period.toNanos(), TimeUnit.NANOSECONDS);
                return () -> f.cancel(false);
            }

            @Override
            public void soon(Runnable task) {
                executor.execute(task);
            }

            @Override
            public void close() {
                executor.shutdownNow();
                try {
                    executor.awaitTermination(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
    }
}
