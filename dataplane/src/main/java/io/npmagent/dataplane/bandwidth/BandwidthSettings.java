package io.npmagent.dataplane.bandwidth;

import java.time.Duration;

/**
 * How the eBPF shapers hold pods to their rates (bandwidth.h in the bpf module).
 *
 * @param horizon      egress: a packet that would depart this far ahead of now is dropped (large
 *                     packets a tenth earlier). Without fq it is the depth of the virtual queue.
 * @param ecnThreshold egress: from this far ahead, ECN-capable packets are marked CE instead
 * @param ingressBurst ingress: the policer's depth, as time at the pod's rate
 * @param bbr          make BBR the congestion control of pods created from now on, where the kernel allows
 * @param flowControl  egress: what the shaper does with pods' TCP flows (protection, back-pressure)
 * @param bigTcp       raise pods' veths to BIG TCP's GSO/GRO sizes (192 KiB packets instead of 64 KiB)
 */
public record BandwidthSettings(Duration horizon, Duration ecnThreshold, Duration ingressBurst, boolean bbr, FlowControl flowControl,
        boolean bigTcp) {
    private static final Duration MAX = Duration.ofSeconds(10);
    /** Chosen by measurement: see pipelines/README.md, "Bandwidth". */
    public static final BandwidthSettings DEFAULTS = new BandwidthSettings(Duration.ofSeconds(1), Duration.ofMillis(100), Duration.ofSeconds(1), false,
            FlowControl.PROTECT, false);

    /** Without BIG TCP. */
    public BandwidthSettings(Duration horizon, Duration ecnThreshold, Duration ingressBurst, boolean bbr, FlowControl flowControl) {
        this(horizon, ecnThreshold, ingressBurst, bbr, flowControl, false);
    }

    public BandwidthSettings {
        check("the EDT horizon", horizon);
        check("the ECN threshold", ecnThreshold);
        check("the ingress burst", ingressBurst);
        if (flowControl == null) {
            throw new IllegalArgumentException("no flow control given (one of " + FlowControl.labels() + ")");
        }
        if (ecnThreshold.compareTo(horizon) > 0) {
            throw new IllegalArgumentException("the ECN threshold (" + ecnThreshold.toMillis() + " ms) is beyond the EDT horizon ("
                    + horizon.toMillis() + " ms): no packet would ever be marked");
        }
    }

    private static void check(String what, Duration d) {
        if (d == null || d.isNegative() || d.isZero() || d.compareTo(MAX) > 0) {
            throw new IllegalArgumentException(what + " must be more than 0 and at most 10 s, not " + d);
        }
    }
}
