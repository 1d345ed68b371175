package io.npmagent.pipelines.scale;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One run of a scenario on one backend in one queue mode, through the whole agent. Event → enforced is
 * measured twice: by packets ({@link #probes}: a probe policy flipped through the API, timed until a TCP
 * connect between two pods answers the new way; every sample kept) and by the agent's own histogram
 * ({@code npm_policy_apply_delay_seconds}: event received to in the kernel). {@code npm640}: for
 * npm640, its 640 policies' creation and the agent's tail ({@link Npm640Time#NONE} otherwise).
 * {@code shortfall}: why there are fewer flips than asked, null when there are not. {@code failure}: why
 * the run did not finish (the agent fell behind, or died), null when it did.
 */
record AgentScaleResult(String scenario, String backend, String mode, int run, int pods, int policies, Boot boot,
        Npm640Time npm640, Latency probes, double agentP50Seconds, double agentP99Seconds, double writeP99Seconds,
        double batchesPerSecond, double writesPerSecond, long heapBytes, long rssBytes, double cpuSeconds, int events, double eventSeconds,
        String shortfall, String failure, ClusterCost cluster) {

    /**
     * The agent's start: process start to /readyz ({@code firstApplySeconds}), of which the informers'
     * list to caches synced and the first whole state's compile and apply, as the agent reports them
     * ({@code npm_startup_seconds}).
     */
    record Boot(double firstApplySeconds, double listSeconds, double compileAndApplySeconds) {
        static Boot failed(double firstApply) {
            return new Boot(firstApply, Double.NaN, Double.NaN);
        }
    }

    /**
     * npm640's 640 policies: from the first create to the API server's last acknowledgement
     * ({@code createdSeconds}, the API server's part) and to all in the kernel with nothing waiting
     * ({@code totalSeconds}); the agent's tail is the difference, the part a queue mode can change.
     */
    record Npm640Time(double createdSeconds, double totalSeconds) {
        static final Npm640Time NONE = new Npm640Time(Double.NaN, Double.NaN);

        double tailSeconds() {
            return totalSeconds - createdSeconds;
        }
    }

    /** What making the scenario's cluster in the real API server took: seconds, objects, and kube-apiserver's and etcd's RSS after. */
    record ClusterCost(double seconds, long objects, long apiServerRss, long etcdRss) {}

    /** Samples of event → enforced by packets, in seconds, in the order they were taken; percentiles by nearest rank. */
    record Latency(List<Double> samples) {
        static final Latency NONE = new Latency(List.of());

        Latency {
            samples = List.copyOf(samples);
        }

        int count() {
            return samples.size();
        }

        double p50() {
            return quantile(0.50);
        }

        double p90() {
            return quantile(0.90);
        }

        double p99() {
            return quantile(0.99);
        }

        double max() {
            return quantile(1.0);
        }

        double quantile(double q) {
            if (samples.isEmpty()) {
                return Double.NaN;
            }
            List<Double> sorted = new ArrayList<>(samples);
            sorted.sort(null);
            return Npm640.percentile(sorted, q);
        }

        /** Every sample of several runs, for a figure over all of them. */
        static Latency pooled(List<AgentScaleResult> runs) {
            List<Double> all = new ArrayList<>();
            runs.forEach(r -> all.addAll(r.probes().samples()));
            return new Latency(all);
        }
    }

    Map<String, Object> json() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("scenario", scenario);
        m.put("backend", backend);
        m.put("mode", mode);
        m.put("run", run);
        m.put("pods", pods);
        m.put("policies", policies);
        m.put("first_apply_seconds", number(boot.firstApplySeconds()));
        m.put("list_seconds", number(boot.listSeconds()));
        m.put("compile_and_apply_seconds", number(boot.compileAndApplySeconds()));
        m.put("npm640_total_seconds", number(npm640.totalSeconds()));
        m.put("npm640_created_seconds", number(npm640.createdSeconds()));
        m.put("npm640_tail_seconds", number(npm640.tailSeconds()));
        m.put("probes", probes.count());
        m.put("p50_seconds", number(probes.p50()));
        m.put("p90_seconds", number(probes.p90()));
        m.put("p99_seconds", number(probes.p99()));
        m.put("max_seconds", number(probes.max()));
        m.put("agent_p50_seconds", number(agentP50Seconds));
        m.put("agent_p99_seconds", number(agentP99Seconds));
        m.put("write_p99_seconds", number(writeP99Seconds));
        m.put("batches_per_second", number(batchesPerSecond));
        m.put("writes_per_second", number(writesPerSecond));
        m.put("heap_bytes", heapBytes);
        m.put("rss_bytes", rssBytes);
        m.put("cpu_seconds", cpuSeconds);
        m.put("events", events);
        m.put("event_seconds", number(eventSeconds));
        m.put("shortfall", shortfall);
        m.put("failure", failure);
        if (cluster != null) {
            m.put("cluster", Map.of("creation_seconds", cluster.seconds(), "objects", cluster.objects(),
                    "kube_apiserver_rss_bytes", cluster.apiServerRss(), "etcd_rss_bytes", cluster.etcdRss()));
        }
        m.put("probe_seconds", probes.samples());
        return m;
    }

    /** A figure, or null where there is none (a run that fell behind): JSON has no NaN. */
    private static Double number(double v) {
        return Double.isNaN(v) ? null : v;
    }

    static AgentScaleResult failed(ScaleScenario s, String backend, QueueMode mode, int run, double firstApply, String why) {
        return new AgentScaleResult(s.name(), backend, mode.label(), run, s.pods(), s.policies(), Boot.failed(firstApply), Npm640Time.NONE, Latency.NONE, Double.NaN,
                Double.NaN, Double.NaN, Double.NaN, Double.NaN, 0, 0, 0, 0, Double.NaN, null, why, null);
    }
}
