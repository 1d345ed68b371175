package io.npmagent.dataplane.batch;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;

/** A clock tests move by hand. */
public final class MutableClock implements InstantSource {
    private Instant now = Instant.parse("2026-01-01T00:00:00Z");

    @Override
    public synchronized Instant instant() {
        return now;
    }

    public synchronized void advance(Duration d) {
        now = now.plus(d);
    }
}
