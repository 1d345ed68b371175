package io.npmagent.agent.config;

import io.npmagent.dataplane.flow.FlowSettings;
import java.time.Duration;

/**
 * The configuration's {@code Flows} object: what the kernel reports ({@code Denied}, {@code Allowed},
 * {@code RatePerSecond}, {@code IntervalSeconds}: {@link FlowSettings}), how long and how many flows the
 * agent keeps for {@code npm-agent flows} ({@code RetentionMinutes}, {@code MaxFlows}), and whether denied
 * flows become Warning Events on the pod whose policy denied them ({@code Events}, opt-in).
 */
public record FlowConfig(boolean denied, boolean allowed, int ratePerSecond, int intervalSeconds, int retentionMinutes, int maxFlows,
        boolean events) {
    public static final FlowConfig DEFAULTS = new FlowConfig(true, false, 1000, 5, 15, 10_000, false);

    /** What the backend's kernel is asked to report. */
    public FlowSettings settings() {
        return new FlowSettings(denied, allowed, ratePerSecond, Duration.ofSeconds(intervalSeconds));
    }

    public Duration retention() {
        return Duration.ofMinutes(retentionMinutes);
    }

    /**
     * This configuration with the keys a reload applies live as {@code next} has them: what the kernel reports
     * and {@code Events}; the flow log's size and retention stay as the agent started.
     */
    FlowConfig withRunTimeKeysOf(FlowConfig next) {
        return new FlowConfig(next.denied, next.allowed, next.ratePerSecond, next.intervalSeconds, retentionMinutes, maxFlows, next.events);
    }
}
