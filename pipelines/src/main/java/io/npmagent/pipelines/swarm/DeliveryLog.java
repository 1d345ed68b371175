package io.npmagent.pipelines.swarm;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A timing watcher's record of its pods' events: per pod, when each event arrived (nanoTime), in order.
 * The load generator writes each pod in sequence and every write makes exactly one event, so the k-th
 * event of a pod is its k-th write: {@link PodWrites} holds when each write was sent, and the two
 * together give every delivery's latency and any update missed.
 */
final class DeliveryLog {
    private final Map<String, List<Long>> received = new HashMap<>();
    private int relists;

    synchronized void event(String pod, long nanos) {
        received.computeIfAbsent(pod, p -> new ArrayList<>()).add(nanos);
    }

    synchronized void relisted() {
        relists++;
    }

    /** Forgets what came before: a profile's writes are matched with that profile's events only. */
    synchronized void clear() {
        received.clear();
        relists = 0;
    }

    synchronized int relists() {
        return relists;
    }

    synchronized List<Long> of(String pod) {
        return List.copyOf(received.getOrDefault(pod, List.of()));
    }
}
