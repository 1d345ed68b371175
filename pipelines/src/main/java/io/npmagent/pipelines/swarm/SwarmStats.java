package io.npmagent.pipelines.swarm;

import java.util.concurrent.atomic.LongAdder;

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
    /** Requests that failed or were refused, tried again a second later. */
    final LongAdder errors = new LongAdder();

    record Snapshot(long events, long eventBytes, long listPages, long listBytes, long relists, long rewatches, long errors) {
        Snapshot minus(Snapshot o) {
            return new Snapshot(events - o.events, eventBytes - o.eventBytes, listPages - o.listPages, listBytes - o.listBytes,
                    relists - o.relists, rewatches - o.rewatches, errors - o.errors);
        }
    }

    Snapshot snapshot() {
        return new Snapshot(events.sum(), eventBytes.sum(), listPages.sum(), listBytes.sum(), relists.sum(), rewatches.sum(), errors.sum());
    }
}
