package io.npmagent.dataplane.bandwidth;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * What the eBPF egress shaper does with a rate-limited pod's TCP flows, beyond charging each packet
 * (bandwidth.h and backpressure.h in the bpf module).
 */
public enum FlowControl {
    /** Packets only: past the horizon, any packet is dropped. */
    OFF("off"),
    /**
     * A TCP flow with fewer than 2 packets in flight is never dropped at the horizon (HBM's rule): no flow starves; and where
     * the sock_ops program is linked, a rate-limited pod's connections pace themselves to the pod's queue (no burst at a start).
     */
    PROTECT("protect"),
    /**
     * Protection, and TCP told to slow down (a congestion notification) as the pod's queue fills, held back rather than dropped
     * past it; no pacing (the two together starve low rates: measured).
     */
    BACK_PRESSURE("back-pressure");

    private final String label;

    FlowControl(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    /** By its label; an error that names the three otherwise. */
    public static FlowControl of(String label) {
        for (FlowControl f : values()) {
            if (f.label.equals(label.toLowerCase(Locale.ROOT))) {
                return f;
            }
        }
        throw new IllegalArgumentException("one of " + labels() + ", not \"" + label + "\"");
    }

    public static String labels() {
        return Arrays.stream(values()).map(FlowControl::label).collect(Collectors.joining(", "));
    }
}
