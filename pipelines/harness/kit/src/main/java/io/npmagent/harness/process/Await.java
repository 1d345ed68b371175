package io.npmagent.harness.process;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Waiting for something to become true, every wait of the harness: polls a condition until it holds or
 * the time is up, then fails naming what it waited for and, when asked, why it is not there yet (a
 * process's log, the last state seen). A condition that throws counts as not yet (a server that is still
 * starting refuses connections), except with {@link Abort}: the thing waited for can no longer come (its
 * process exited), and waiting on would only hide why.
 */
public final class Await {
    private static final Duration POLL = Duration.ofMillis(50);

    private Await() {}

    /** Thrown when the time is up; its message says what was awaited and for how long. */
    public static final class TimedOut extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        TimedOut(String message, Throwable last) {
            super(message, last);
        }
    }

    /** Thrown by a condition that knows it will never hold: ends the wait at once. */
    public static final class Abort extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        public Abort(String message) {
            super(message);
        }
    }

    /** Waits until {@code done} holds, at most {@code timeout}. */
    public static void until(Duration timeout, String what, BooleanSupplier done) {
        until(timeout, what, done, () -> "");
    }

    /** As {@link #until(Duration, String, BooleanSupplier)}, the failure adding {@code why()} (read once, at the end). */
    public static void until(Duration timeout, String what, BooleanSupplier done, Supplier<String> why) {
        value(timeout, what, () -> done.getAsBoolean() ? Optional.of(Boolean.TRUE) : Optional.empty(), why);
    }

    /**
     * As {@link #until(Duration, String, BooleanSupplier)}, trying every {@code poll} rather than at once
     * again: for a condition that is itself costly (a command in a pod, a scrape).
     */
    public static void until(Duration timeout, Duration poll, String what, BooleanSupplier done) {
        value(timeout, poll, what, () -> done.getAsBoolean() ? Optional.of(Boolean.TRUE) : Optional.empty(), () -> "");
    }

    /** Waits until {@code probe} has a value, and returns it. */
    public static <T> T value(Duration timeout, String what, Supplier<Optional<T>> probe, Supplier<String> why) {
        return value(timeout, POLL, what, probe, why);
    }

    /**
     * As {@link #value(Duration, String, Supplier, Supplier)}, looking every {@code poll}: a wait that is also a
     * measurement (the scale pipeline's time to converge) looks more often than the default 50 ms.
     */
    public static <T> T value(Duration timeout, Duration poll, String what, Supplier<Optional<T>> probe, Supplier<String> why) {
        Instant deadline = Instant.now().plus(timeout);
        RuntimeException last = null;
        while (true) {
            try {
                Optional<T> v = probe.get();
                if (v.isPresent()) {
                    return v.get();
                }
            } catch (Abort e) {
                throw e;
            } catch (RuntimeException e) {
                last = e;
            }
            if (Instant.now().isAfter(deadline)) {
                String reason = why.get();
                throw new TimedOut(what + ": not after " + timeout.toSeconds() + " s"
                        + (last != null ? " (last: " + last.getMessage() + ")" : "") + (reason.isEmpty() ? "" : "; " + reason), last);
            }
            sleep(poll);
        }
    }

    /** Sleeps, keeping the interrupt (a caller that is interrupted stops at its next check). */
    public static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
