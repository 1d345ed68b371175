package io.npmagent.agent.config;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * What a new configuration changes, and which of those changes take effect without a restart: the
 * batching keys (the queue takes new settings between batches), the log level, what the kernel reports
 * ({@code Flows.Denied}, {@code Allowed}, {@code RatePerSecond}, {@code IntervalSeconds}: the backend's
 * flow source is told, a netfilter backend re-renders its chains) and {@code Flows.Events} (whether denied
 * flows become Warning Events: a switch read at each flow). Everything else (the backend, where it pins,
 * the shapers' settings, the HTTP listener, the informers' resync, the reconcile period, the flow log's
 * size and retention, set when it is made) is read once at start: a change to it is reported as "restart
 * needed" and the running agent keeps its old value.
 */
public record ConfigReload(List<String> applied, List<String> restartNeeded) {
    static final Set<String> HOT = Set.of("NetPolInBackground", "NetPolAdaptiveBatching", "MaxPendingNetPols", "NetPolIntervalInMilliseconds", "LogLevel",
            "Flows.Denied", "Flows.Allowed", "Flows.RatePerSecond", "Flows.IntervalSeconds", "Flows.Events");

    public static ConfigReload between(AgentConfig before, AgentConfig after) {
        Map<String, Object> a = before.byKey();
        Map<String, Object> b = after.byKey();
        Set<String> keys = new HashSet<>(a.keySet());
        keys.addAll(b.keySet());
        List<String> applied = new ArrayList<>();
        List<String> restart = new ArrayList<>();
        for (String k : keys.stream().sorted().toList()) {
            if (!Objects.equals(a.get(k), b.get(k))) {
                (HOT.contains(k) ? applied : restart).add(k);
            }
        }
        return new ConfigReload(List.copyOf(applied), List.copyOf(restart));
    }

    public boolean isEmpty() {
        return applied.isEmpty() && restartNeeded.isEmpty();
    }
}
