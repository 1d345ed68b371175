package io.npmagent.pipelines.swarm;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Every write the load generator made, stamped: per pod, when each write was sent (nanoTime), in order;
 * and how long each took the API server to acknowledge. Matched with each timing watcher's
 * {@link DeliveryLog} at the end of a profile: delivery latencies, and updates missed.
 */
final class PodWrites {
    private final Map<String, List<Long>> sent = new HashMap<>();
    private final List<Double> acknowledged = new ArrayList<>();
    private int failed;

    synchronized void sent(String pod, long nanos) {
        sent.computeIfAbsent(pod, p -> new ArrayList<>()).add(nanos);
    }

    synchronized void acknowledged(double seconds) {
        acknowledged.add(seconds);
    }

    synchronized void failed() {
        failed++;
    }

    synchronized void clear() {
        sent.clear();
        acknowledged.clear();
        failed = 0;
    }

    synchronized int failures() {
        return failed;
    }

    synchronized int count() {
        return acknowledged.size();
    }

    synchronized List<Double> latencies() {
        return List.copyOf(acknowledged);
    }

    /** What the timing watchers saw of these writes. */
    record Delivery(List<Double> seconds, long missed, long extra, int watchersChecked, int watchersRelisted) {}

    /**
     * Each timing watcher's k-th event of a pod against the pod's k-th write: the latency of each, and, for
     * the watchers that did not relist meanwhile (a relist may rightly skip updates), every write with no
     * event ({@code missed}) and every event with no write ({@code extra}).
     */
    synchronized Delivery delivered(List<DeliveryLog> logs) {
        List<Double> seconds = new ArrayList<>();
        long missed = 0;
        long extra = 0;
        int checked = 0;
        int relisted = 0;
        for (DeliveryLog log : logs) {
            if (log.relists() > 0) {
                relisted++;
                continue;
            }
            checked++;
            for (Map.Entry<String, List<Long>> e : sent.entrySet()) {
                List<Long> got = log.of(e.getKey());
                List<Long> wrote = e.getValue();
                for (int k = 0; k < Math.min(got.size(), wrote.size()); k++) {
                    seconds.add((got.get(k) - wrote.get(k)) / 1e9);
                }
                missed += Math.max(0, wrote.size() - got.size());
                extra += Math.max(0, got.size() - wrote.size());
            }
        }
        return new Delivery(seconds, missed, extra, checked, relisted);
    }
}
