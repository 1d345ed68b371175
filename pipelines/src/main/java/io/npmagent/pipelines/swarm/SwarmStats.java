package io.npmagent.pipelines.swarm;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;

/** What every watcher of a swarm counts, summed: read between two moments, it is a profile's figures. */
final class SwarmStats {
    final LongAdder events = new LongAdder();
    final LongAdder eventBytes = new LongAdder();
    final LongAdder listPages = new LongAdder();
    final LongAdder listBytes = new LongAdder();
    /** Lists made again because a watch's resourceVersion was gone (410): what a watcher that fell behind pays. */
    final LongAdder relists = new LongAdder();
    /** Watches that ended (their timeout, or the server closing them) and were opened again from the last resourceVersion. */
    final LongAdder rewatches = new LongAdder();
    /**
     * Requests that failed or were refused (and were tried again), by kind ("list page 410", "watch broken", ...):
     * their sum is a profile's errors, the kinds say why a start does not end.
     */
    private final Map<String, LongAdder> failures = new ConcurrentHashMap<>();

    void failed(String what) {
        failures.computeIfAbsent(what, k -> new LongAdder()).increment();
    }

    /** Every kind of failure so far and its count, by kind: "list page 410: 12, watch 500: 1", or "none". */
    String failures() {
        Map<String, Long> sorted = new TreeMap<>();
        failures.forEach((k, v) -> sorted.put(k, v.sum()));
        return sorted.isEmpty() ? "none" : sorted.entrySet().stream().map(e -> e.getKey() + ": " + e.getValue()).collect(Collectors.joining(", "));
    }

    record Snapshot(long events, long eventBytes, long listPages, long listBytes, long relists, long rewatches, long errors) {
        Snapshot minus(Snapshot o) {
            return new Snapshot(events - o.events, eventBytes - o.eventBytes, listPages - o.listPages, listBytes - o.listBytes,
                    relists - o.relists, rewatches - o.rewatches, errors - o.errors);
        }
    }

    Snapshot snapshot() {
        return new Snapshot(events.sum(), eventBytes.sum(), listPages.sum(), listBytes.sum(), relists.sum(), rewatches.sum(),
                failures.values().stream().mapToLong(LongAdder::sum).sum());
    }
}
