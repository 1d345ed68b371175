package io.npmagent.agent.run;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** A loop's stop request and the moment it has finished, shared by the model loops. */
final class LoopStop {
    private volatile boolean requested;
    private final CountDownLatch finished = new CountDownLatch(1);

    boolean requested() {
        return requested;
    }

    /** The loop has ended (called last, from its own thread). */
    void finished() {
        finished.countDown();
    }

    void stop(Duration wait) {
        requested = true;
        try {
            finished.await(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
