package io.npmagent.dataplane.flow;

import java.time.Duration;

/**
 * What the kernel reports, as the agent's configuration ({@code Flows}) says: denied flows (on by default),
 * allowed flows (opt-in: every new connection of a judged pod costs a report), the most reports a second
 * per CPU (eBPF) or per log rule (netfilter's {@code limit}: a pod's drops in one direction and family)
 * before the rest are counted lost, and how often a flow that keeps sending reports a summary of its counts.
 */
public record FlowSettings(boolean denied, boolean allowed, int ratePerSecond, Duration interval) {
    public static final FlowSettings DEFAULT = new FlowSettings(true, false, 1000, Duration.ofSeconds(5));
    public static final FlowSettings OFF = new FlowSettings(false, false, 1000, Duration.ofSeconds(5));

    public FlowSettings {
        if (ratePerSecond < 1) {
            throw new IllegalArgumentException("Flows.RatePerSecond must be at least 1, got " + ratePerSecond);
        }
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("Flows.IntervalSeconds must be positive, got " + interval.toSeconds());
        }
    }

    /** Whether anything is reported at all. */
    public boolean any() {
        return denied || allowed;
    }
}
