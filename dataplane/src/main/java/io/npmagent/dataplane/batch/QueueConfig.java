package io.npmagent.dataplane.batch;

import java.time.Duration;

/**
 * How the queue batches, with Azure NPM's knobs.
 *
 * @param background          {@code NetPolInBackground}: batch in the background; off applies each
 *                            event at once, one transaction per event (the baseline)
 * @param maxPendingNetPols   {@code MaxPendingNetPols}: flush as soon as this many policy changes wait
 * @param interval            {@code NetPolIntervalInMilliseconds}: flush at least this often
 */
public record QueueConfig(boolean background, int maxPendingNetPols, Duration interval) {
    public static final QueueConfig DEFAULTS = new QueueConfig(true, 100, Duration.ofMillis(500));
    public static final QueueConfig FOREGROUND = new QueueConfig(false, 1, Duration.ofMillis(500));

    public QueueConfig {
        if (maxPendingNetPols < 1) {
            throw new IllegalArgumentException("MaxPendingNetPols must be at least 1, not " + maxPendingNetPols);
        }
        if (interval == null || interval.toMillis() < 1) {
            throw new IllegalArgumentException("NetPolIntervalInMilliseconds must be at least 1, not " + interval);
        }
    }
}
