package io.npmagent.pipelines.datapath;

import java.util.ArrayList;
import java.util.List;

/**
 * One row of the datapath table: a backend with a number of policies selecting the server, measured
 * ({@code ok}), not measured because the backend is unknown or not installed ({@code skipped}), or
 * broken off ({@code failed}); {@code reason} says why for the last two.
 *
 * @param connectionSamples new TCP connections per second, one per repetition
 * @param gbitSamples       bulk throughput in Gbit/s, one per repetition (empty with --connections-only)
 * @param intruderBlocked   whether the pod no policy admits could not connect to the server (null when not measured)
 */
record DatapathPoint(String backend, int policies, String status, String reason, List<Double> connectionSamples,
        List<Double> gbitSamples, Boolean intruderBlocked) {

    DatapathPoint {
        connectionSamples = List.copyOf(connectionSamples);
        gbitSamples = List.copyOf(gbitSamples);
    }

    static DatapathPoint ok(String backend, int policies, List<Double> connections, List<Double> gbits, boolean intruderBlocked) {
        return new DatapathPoint(backend, policies, "ok", null, connections, gbits, intruderBlocked);
    }

    /** A backend that was not measured at all: one row stands for all its policy counts. */
    static DatapathPoint skipped(String backend, String reason) {
        return new DatapathPoint(backend, -1, "skipped", reason, List.of(), List.of(), null);
    }

    static DatapathPoint failed(String backend, int policies, String reason) {
        return new DatapathPoint(backend, policies, "failed", reason, List.of(), List.of(), null);
    }

    boolean ok() {
        return status.equals("ok");
    }

    /** Whether the intruder was blocked exactly when some policy selects the server (no policy: open). */
    boolean enforcedAsExpected() {
        return intruderBlocked != null && intruderBlocked == (policies > 0);
    }

    /** The median of the connection samples, NaN without any. */
    double connectionsPerSecond() {
        return median(connectionSamples);
    }

    /** The median of the throughput samples, NaN without any. */
    double gbitPerSecond() {
        return median(gbitSamples);
    }

    /** The median: the middle sample, or the mean of the two middle ones. */
    static double median(List<Double> samples) {
        if (samples.isEmpty()) {
            return Double.NaN;
        }
        List<Double> sorted = new ArrayList<>(samples);
        sorted.sort(null);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }
}
