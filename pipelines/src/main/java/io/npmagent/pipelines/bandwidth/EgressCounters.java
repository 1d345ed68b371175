package io.npmagent.pipelines.bandwidth;

import io.npmagent.pipelines.bench.PromText;
import java.util.Map;

/**
 * The client pod's egress shaping as the agent counted it over a point ({@code npm_bandwidth_*_total}, a
 * fresh sandbox each point): packets passed, dropped at the horizon, passed past it because their flow
 * had fewer than 2 in flight, and at the socket, slowed (told to back off) and held back.
 */
record EgressCounters(long packets, long horizonDrops, long protectedPackets, long slowed, long held) {
    static final EgressCounters NONE = new EgressCounters(0, 0, 0, 0, 0);

    static EgressCounters of(String metrics, String pod) {
        return new EgressCounters(count(metrics, "npm_bandwidth_packets_total", pod), count(metrics, "npm_bandwidth_horizon_drops_total", pod),
                count(metrics, "npm_bandwidth_protected_total", pod), count(metrics, "npm_bandwidth_slowed_total", pod),
                count(metrics, "npm_bandwidth_held_total", pod));
    }

    /** Horizon drops as a share of what reached the horizon, in percent. */
    double dropPercent() {
        long reached = packets + horizonDrops;
        return reached == 0 ? 0 : 100.0 * horizonDrops / reached;
    }

    /** {@code name}'s egress value for POD (namespace/name); 0 when the agent has not counted it. */
    private static long count(String metrics, String name, String pod) {
        String[] ns = pod.split("/", 2);
        for (Map.Entry<String, Double> e : PromText.samples(metrics, name).entrySet()) {
            String labels = e.getKey();
            if (labels.contains("namespace=\"" + ns[0] + "\"") && labels.contains("pod=\"" + ns[1] + "\"") && labels.contains("direction=\"egress\"")) {
                return e.getValue().longValue();
            }
        }
        return 0;
    }
}
