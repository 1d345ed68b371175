package io.npmagent.pipelines.datapath;

import java.util.ArrayList;
import java.util.List;

/**
 * One row of the datapath table: a backend with a number of policies selecting the server, measured
 * ({@code ok}), not measured because the backend is unknown or not installed ({@code skipped}), or
 * broken off ({@code failed}); {@code reason} says why for the last two.
 *
 * @param connectionSamples        new TCP connections per second to the server's pod address, one per repetition
 * @param serviceSamples           the same through the server's ClusterIP (kube-proxy's DNAT), one per repetition
 * @param gbitSamples              bulk throughput in Gbit/s, one per repetition (empty with --connections-only)
 * @param intruderBlocked          whether the pod no policy admits could not connect to the server's address (null when not measured)
 * @param intruderBlockedViaService the same through the ClusterIP (null when not measured)
 */
record DatapathPoint(String backend, int policies, String status, String reason, List<Double> connectionSamples,
        List<Double> serviceSamples, List<Double> gbitSamples, Boolean intruderBlocked, Boolean intruderBlockedViaService) {

    DatapathPoint {
        connectionSamples = List.copyOf(connectionSamples);
        serviceSamples = List.copyOf(serviceSamples);
        gbitSamples = List.copyOf(gbitSamples);
    }

    /** The samples of one measured point. */
    record Samples(List<Double> connections, List<Double> viaService, List<Double> gbits) {}

    static DatapathPoint ok(String backend, int policies, Samples samples, boolean intruderBlocked, boolean intruderBlockedViaService) {
        return new DatapathPoint(backend, policies, "ok", null, samples.connections(), samples.viaService(), samples.gbits(),
                intruderBlocked, intruderBlockedViaService);
    }

    /** A backend that was not measured at all: one row stands for all its policy counts. */
    static DatapathPoint skipped(String backend, String reason) {
        return new DatapathPoint(backend, -1, "skipped", reason, List.of(), List.of(), List.of(), null, null);
    }

    static DatapathPoint failed(String backend, int policies, String reason) {
        return new DatapathPoint(backend, policies, "failed", reason, List.of(), List.of(), List.of(), null, null);
    }

    boolean ok() {
        return status.equals("ok");
    }

    /**
     * Whether the intruder was blocked exactly when some policy selects the server (no policy: open), on
     * its address and through its ClusterIP alike.
     */
    boolean enforcedAsExpected() {
        return intruderBlocked != null && intruderBlocked == (policies > 0) && intruderBlockedViaService != null
                && intruderBlockedViaService == (policies > 0);
    }

    /** The median of the connection samples, NaN without any. */
    double connectionsPerSecond() {
        return median(connectionSamples);
    }

    /** The median of the connection samples through the ClusterIP, NaN without any. */
    double serviceConnectionsPerSecond() {
        return median(serviceSamples);
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
