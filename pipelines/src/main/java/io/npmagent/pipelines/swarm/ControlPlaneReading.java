package io.npmagent.pipelines.swarm;

import io.npmagent.pipelines.bench.BenchApiServer;
import io.npmagent.pipelines.bench.ProcFiles;
import io.npmagent.pipelines.bench.PromText;
import java.io.IOException;
import java.util.TreeMap;

/**
 * The control plane at one moment, as the figures need it: kube-apiserver's and etcd's CPU time and
 * memory (from /proc) and the API server's own metrics. Two readings make a profile's figures
 * ({@link #until}).
 */
record ControlPlaneReading(long nanos, double apiCpu, double etcdCpu, long apiRss, long apiPeakRss, long etcdRss, String metrics) {

    static ControlPlaneReading now(BenchApiServer api) {
        long apiPid = api.controlPlane().pid("kube-apiserver").orElseThrow();
        long etcdPid = api.controlPlane().pid("etcd").orElseThrow();
        String metrics = api.admin().raw("/metrics");
        return new ControlPlaneReading(System.nanoTime(), cpuSeconds(apiPid), cpuSeconds(etcdPid), status(apiPid, "VmRSS:"),
                status(apiPid, "VmHWM:"), status(etcdPid, "VmRSS:"), metrics == null ? "" : metrics);
    }

    /** What happened between this reading and {@code later}. */
    Cost until(ControlPlaneReading later) {
        double seconds = (later.nanos - nanos) / 1e9;
        double events = delta(later, "apiserver_watch_events_total");
        double eventBytes = delta(later, "apiserver_watch_events_sizes_sum");
        double sized = delta(later, "apiserver_watch_events_sizes_count");
        TreeMap<Double, Double> writes = PromText.growth(writes(metrics), writes(later.metrics));
        TreeMap<Double, Double> lists = PromText.growth(lists(metrics), lists(later.metrics));
        return new Cost(seconds, (later.apiCpu - apiCpu) / seconds, (later.etcdCpu - etcdCpu) / seconds, later.apiRss, later.apiPeakRss,
                later.etcdRss, PromText.total(later.metrics, "apiserver_longrunning_requests", l -> l.contains("verb=\"WATCH\"")),
                events / seconds, sized > 0 ? eventBytes / sized : Double.NaN,
                delta(later, "apiserver_terminated_watchers_total"), PromText.quantile(writes, 0.99), PromText.quantile(lists, 0.99));
    }

    /**
     * A profile's cost to the control plane.
     *
     * @param apiCores       kube-apiserver's CPU, in cores
     * @param watches        watches open at the end
     * @param deliveries     watch events sent per second, to every watcher together
     * @param bytesPerEvent  the mean size of an event sent
     * @param terminated     watchers the server cut off (too slow to read)
     * @param writeP99       the API's pod write latency, p99 (create, update, patch, delete)
     * @param listP99        the API's list latency, p99
     */
    record Cost(double seconds, double apiCores, double etcdCores, long apiRss, long apiPeakRss, long etcdRss, double watches,
            double deliveries, double bytesPerEvent, double terminated, double writeP99, double listP99) {}

    private double delta(ControlPlaneReading later, String metric) {
        return PromText.total(later.metrics, metric) - PromText.total(metrics, metric);
    }

    private static TreeMap<Double, Double> writes(String text) {
        return PromText.buckets(text, "apiserver_request_duration_seconds", l -> l.contains("resource=\"pods\"")
                && (l.contains("verb=\"POST\"") || l.contains("verb=\"PUT\"") || l.contains("verb=\"PATCH\"") || l.contains("verb=\"DELETE\"")));
    }

    private static TreeMap<Double, Double> lists(String text) {
        return PromText.buckets(text, "apiserver_request_duration_seconds", l -> l.contains("verb=\"LIST\""));
    }

    private static double cpuSeconds(long pid) {
        try {
            return ProcFiles.cpuSeconds(pid);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read /proc/" + pid + "/stat", e);
        }
    }

    private static long status(long pid, String field) {
        try {
            return ProcFiles.statusBytes(pid, field);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read /proc/" + pid + "/status", e);
        }
    }
}
