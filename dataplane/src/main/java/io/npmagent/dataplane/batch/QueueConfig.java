package io.npmagent.dataplane.batch;

import io.npmagent.dataplane.model.ApiSyntax;
import java.time.Duration;
import java.util.Map;

/**
 * How the queue batches, with Azure NPM's knobs.
 *
 * @param background          {@code NetPolInBackground}: batch in the background; off applies each
 *                            event at once, one transaction per event (the baseline)
 * @param adaptive            {@code NetPolAdaptiveBatching} (ours), in the background: a change goes as
 *                            soon as no batch is in flight, and what arrives during one goes together in
 *                            the next; off, NPM's fixed-interval queue: changes wait for the interval
 * @param maxPendingNetPols   {@code MaxPendingNetPols}: flush as soon as this many policy changes wait
 *                            (it matters to the fixed-interval queue; the adaptive one never holds a
 *                            change back that could go)
 * @param interval            {@code NetPolIntervalInMilliseconds}: the longest a change waits for a
 *                            batch (fixed-interval: the period of every flush; adaptive: a backstop that
 *                            also carries retries of refused parts when they fall due)
 */
public record QueueConfig(boolean background, boolean adaptive, int maxPendingNetPols, Duration interval) {
    public static final QueueConfig DEFAULTS = new QueueConfig(true, true, 100, Duration.ofMillis(500));
    /** NPM's queue as NPM has it: a batch every interval, or at MaxPendingNetPols. The baseline adaptive batching is measured against. */
    public static final QueueConfig FIXED_INTERVAL = DEFAULTS.withAdaptive(false);
    public static final QueueConfig FOREGROUND = new QueueConfig(false, true, 1, Duration.ofMillis(500));

    /** This configuration with adaptive batching on or off. */
    public QueueConfig withAdaptive(boolean on) {
        return new QueueConfig(background, on, maxPendingNetPols, interval);
    }

    /**
     * Reads Azure NPM's keys from a flat map of settings (values as parsed from JSON or YAML, or strings):
     * {@code NetPolInBackground}, {@code MaxPendingNetPols}, {@code NetPolIntervalInMilliseconds} and
     * its NPM spelling {@code NetPolInvervalInMilliseconds}; and ours, {@code NetPolAdaptiveBatching}. A missing key keeps its default; a bad value
     * throws {@link IllegalArgumentException} naming the key and the value.
     */
    public static QueueConfig fromSettings(Map<String, ?> settings) {
        boolean background = DEFAULTS.background;
        boolean adaptive = DEFAULTS.adaptive;
        int maxPending = DEFAULTS.maxPendingNetPols;
        long intervalMs = DEFAULTS.interval.toMillis();
        if (settings.containsKey("NetPolInBackground")) {
            background = bool("NetPolInBackground", settings.get("NetPolInBackground"));
        }
        if (settings.containsKey("NetPolAdaptiveBatching")) {
            adaptive = bool("NetPolAdaptiveBatching", settings.get("NetPolAdaptiveBatching"));
        }
        if (settings.containsKey("MaxPendingNetPols")) {
            maxPending = (int) number("MaxPendingNetPols", settings.get("MaxPendingNetPols"), 1, Integer.MAX_VALUE);
        }
        Long correct = settings.containsKey("NetPolIntervalInMilliseconds")
                ? number("NetPolIntervalInMilliseconds", settings.get("NetPolIntervalInMilliseconds"), 1, 3_600_000) : null;
        Long npm = settings.containsKey("NetPolInvervalInMilliseconds")
                ? number("NetPolInvervalInMilliseconds", settings.get("NetPolInvervalInMilliseconds"), 1, 3_600_000) : null;
        if (correct != null && npm != null && !correct.equals(npm)) {
            throw new IllegalArgumentException("NetPolIntervalInMilliseconds (" + correct + ") and its NPM spelling "
                    + "NetPolInvervalInMilliseconds (" + npm + ") disagree; set one");
        }
        if (correct != null || npm != null) {
            intervalMs = correct != null ? correct : npm;
        }
        return new QueueConfig(background, adaptive, maxPending, Duration.ofMillis(intervalMs));
    }

    private static boolean bool(String key, Object v) {
        if (v instanceof Boolean b) {
            return b;
        }
        if ("true".equals(String.valueOf(v)) || "false".equals(String.valueOf(v))) {
            return Boolean.parseBoolean(String.valueOf(v));
        }
        throw new IllegalArgumentException(key + ": expected true or false, not " + quoted(v));
    }

    private static long number(String key, Object v, long min, long max) {
        long n;
        if (v instanceof Number num && num.doubleValue() == Math.rint(num.doubleValue())) {
            n = num.longValue();
        } else {
            try {
                n = Long.parseLong(String.valueOf(v).strip());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(key + ": expected a whole number, not " + quoted(v));
            }
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException(key + ": " + n + " is outside " + min + " to " + max);
        }
        return n;
    }

    private static String quoted(Object v) {
        return v instanceof String s ? ApiSyntax.quote(s) : String.valueOf(v);
    }

    public QueueConfig {
        if (maxPendingNetPols < 1) {
            throw new IllegalArgumentException("MaxPendingNetPols must be at least 1, not " + maxPendingNetPols);
        }
        if (interval == null || interval.toMillis() < 1) {
            throw new IllegalArgumentException("NetPolIntervalInMilliseconds must be at least 1, not " + interval);
        }
    }
}
