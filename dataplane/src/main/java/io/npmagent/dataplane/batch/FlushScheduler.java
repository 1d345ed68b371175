package io.npmagent.dataplane.batch;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Where background flushes run: one thread, so flushes never overlap. A seam so tests run flushes by
 * hand and never sleep.
 */
public interface FlushScheduler extends AutoCloseable {

    /** Run {@code task} every {@code period}, starting one period from now. */
    void every(Duration period, Runnable task);

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
            public void every(Duration period, Runnable task) {
                executor.scheduleWithFixedDelay(task, period.toNanos(), period.toNanos(), TimeUnit.NANOSECONDS);
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
