package io.npmagent.bpf.maps;

import java.nio.ByteBuffer;

/**
 * {@code npm_bw_stats} (bandwidth.h): per endpoint and direction of a rate-limited pod, per CPU, what
 * passed (packets, bytes, of which ECN-marked), what was dropped at the horizon and what was policed;
 * egress packets past the horizon passed since their flow had fewer than 2 in flight; and at the socket,
 * packets TCP was told to slow down on and packets held back.
 * Keyed like {@code npm_drops} ({@link DropMap.Key}).
 */
public final class BandwidthStatsMap {
    public static final String NAME = "npm_bw_stats";
    public static final int VALUE_SIZE = 64;

    private BandwidthStatsMap() {}

    /** The sum over CPUs of a per-CPU value. */
    public record Value(long packets, long bytes, long marked, long horizonDrops, long policed, long protectedPackets, long slowed, long held) {
        public static Value sumPerCpu(byte[] perCpu) {
            ByteBuffer b = Bytes.reader(perCpu, 0);
            long[] sum = new long[8];
            for (int off = 0; off + VALUE_SIZE <= perCpu.length; off += VALUE_SIZE) {
                for (int i = 0; i < sum.length; i++) {
                    sum[i] += b.getLong(off + 8 * i);
                }
            }
            return new Value(sum[0], sum[1], sum[2], sum[3], sum[4], sum[5], sum[6], sum[7]);
        }
    }
}
