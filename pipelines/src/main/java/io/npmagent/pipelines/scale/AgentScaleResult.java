package io.npmagent.pipelines.scale;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One scenario on one backend in one mode, through the whole agent. Event → enforced is measured twice:
 * by packets ({@code p50/p99/max}: a probe policy flipped through the API, timed until a TCP connect
 * between two pods answers the new way) and by the agent's own histogram
 * ({@code npm_policy_apply_delay_seconds}: event received to in the kernel). {@code failure} is why the
 * run did not finish (the agent fell behind, or died), null when it did.
 */
record AgentScaleResult(String scenario, String backend, boolean background, int pods, int policies, double firstApplySeconds,
        double p50Seconds, double p99Seconds, double maxSeconds, double agentP50Seconds, double agentP99Seconds, double writeP99Seconds,
        long heapBytes, long rssBytes, double cpuSeconds, int events, List<Double> probeSeconds, String failure, ClusterCost cluster) {

    /** What making the scenario's cluster in the real API server took: seconds, objects, and kube-apiserver's and etcd's RSS after. */
    record ClusterCost(double seconds, long objects, long apiServerRss, long etcdRss) {}

    Map<String, Object> json() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("scenario", scenario);
        m.put("backend", backend);
        m.put("background", background);
        m.put("pods", pods);
        m.put("policies", policies);
        m.put("first_apply_seconds", number(firstApplySeconds));
        m.put("p50_seconds", number(p50Seconds));
        m.put("p99_seconds", number(p99Seconds));
        m.put("max_seconds", number(maxSeconds));
        m.put("agent_p50_seconds", number(agentP50Seconds));
        m.put("agent_p99_seconds", number(agentP99Seconds));
        m.put("write_p99_seconds", number(writeP99Seconds));
        m.put("heap_bytes", heapBytes);
        m.put("rss_bytes", rssBytes);
        m.put("cpu_seconds", cpuSeconds);
        m.put("events", events);
        m.put("probes", probeSeconds.size());
        m.put("failure", failure);
        if (cluster != null) {
            m.put("cluster", Map.of("creation_seconds", cluster.seconds(), "objects", cluster.objects(),
                    "kube_apiserver_rss_bytes", cluster.apiServerRss(), "etcd_rss_bytes", cluster.etcdRss()));
        }
        return m;
    }

    /** A figure, or null where there is none (a run that fell behind): JSON has no NaN. */
    private static Double number(double v) {
        return Double.isNaN(v) ? null : v;
    }

    static AgentScaleResult failed(ScaleScenario s, String backend, boolean background, double firstApply, String why) {
        return new AgentScaleResult(s.name(), backend, background, s.pods(), s.policies(), firstApply, Double.NaN, Double.NaN, Double.NaN,
                Double.NaN, Double.NaN, Double.NaN, 0, 0, 0, 0, List.of(), why, null);
    }
}
