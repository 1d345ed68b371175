package io.npmagent.pipelines.scale;

import java.util.Locale;

/**
 * How the agent under test batches, as its configuration file says it: adaptive batching (the default),
 * NPM's fixed-interval queue (the baseline adaptive batching must beat), or the foreground (one
 * transaction per event).
 */
public enum QueueMode {
    ADAPTIVE("\"NetPolInBackground\": true, \"NetPolAdaptiveBatching\": true"),
    INTERVAL("\"NetPolInBackground\": true, \"NetPolAdaptiveBatching\": false"),
    FOREGROUND("\"NetPolInBackground\": false");

    /** The configuration file's keys for this mode, as JSON members. */
    public final String settings;

    QueueMode(String settings) {
        this.settings = settings;
    }

    /** As the command line and the report spell it. */
    String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    boolean background() {
        return this != FOREGROUND;
    }

    static QueueMode of(String label) {
        for (QueueMode m : values()) {
            if (m.label().equals(label)) {
                return m;
            }
        }
        throw new IllegalArgumentException("--mode takes adaptive, interval and foreground, not " + label);
    }
}
