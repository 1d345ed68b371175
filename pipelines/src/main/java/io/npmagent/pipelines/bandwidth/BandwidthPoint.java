package io.npmagent.pipelines.bandwidth;

/**
 * One measurement: a shaper ({@code edt}, {@code tbf} or {@code none}) at a limit, with {@code streams}
 * bulk TCP streams from client to server and, for the latency test, the request/response probe beside
 * them. Latencies are null when the probe did not run; {@code error} is set when the point failed.
 */
record BandwidthPoint(String test, String shaper, String direction, long limitBitsPerSecond, int streams, double achievedBitsPerSecond,
        long retransmits, RrProbe.Latency latency, String error) {

    static BandwidthPoint failed(String test, String shaper, String direction, long limit, int streams, String error) {
        return new BandwidthPoint(test, shaper, direction, limit, streams, 0, 0, null, error);
    }

    boolean ok() {
        return error == null;
    }

    /** Achieved over limit, minus one: +0.02 is 2% over. NaN without a limit. */
    double deviation() {
        return limitBitsPerSecond == 0 ? Double.NaN : achievedBitsPerSecond / limitBitsPerSecond - 1;
    }
}
