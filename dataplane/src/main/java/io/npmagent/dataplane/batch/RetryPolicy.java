package io.npmagent.dataplane.batch;

import java.time.Duration;

/**
 * When to try a refused part of a batch again: {@code initial}, doubling per attempt, never more than
 * {@code max} apart. Parts are retried forever, but never at full speed.
 */
public record RetryPolicy(Duration initial, Duration max) {
    public static final RetryPolicy DEFAULTS = new RetryPolicy(Duration.ofSeconds(1), Duration.ofMinutes(5));

    public RetryPolicy {
        if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("retry delays must be positive and max >= initial");
        }
    }

    /** The wait after the {@code attempt}-th failure (1 for the first). */
    public Duration delayAfter(int attempt) {
        Duration d = initial;
        for (int i = 1; i < attempt && d.compareTo(max) < 0; i++) {
            d = d.multipliedBy(2);
        }
        return d.compareTo(max) > 0 ? max : d;
    }
}
