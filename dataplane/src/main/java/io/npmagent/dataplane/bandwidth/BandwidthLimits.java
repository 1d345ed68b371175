package io.npmagent.dataplane.bandwidth;

import io.npmagent.dataplane.model.Direction;

/**
 * A local pod's rate limits in bits per second, per direction of the pod's traffic; 0 is no limit.
 * Egress is what the pod sends, ingress what is delivered to it.
 */
public record BandwidthLimits(long egressBitsPerSecond, long ingressBitsPerSecond) {
    public static final BandwidthLimits NONE = new BandwidthLimits(0, 0);

    public BandwidthLimits {
        if (egressBitsPerSecond < 0 || ingressBitsPerSecond < 0) {
            throw new IllegalArgumentException("a rate is positive, or 0 for no limit");
        }
    }

    public long bitsPerSecond(Direction direction) {
        return direction == Direction.EGRESS ? egressBitsPerSecond : ingressBitsPerSecond;
    }

    public boolean limited() {
        return egressBitsPerSecond != 0 || ingressBitsPerSecond != 0;
    }

    @Override
    public String toString() {
        return "egress " + rate(egressBitsPerSecond) + ", ingress " + rate(ingressBitsPerSecond);
    }

    private static String rate(long bps) {
        return bps == 0 ? "unlimited" : bps + " bit/s";
    }
}
