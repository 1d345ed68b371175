package io.npmagent.pipelines.swarm;

import io.npmagent.pipelines.bench.BenchApiServer;
import io.npmagent.pipelines.bench.ProcFiles;
import io.npmagent.pipelines.bench.PromText;
import java.io.IOException;
import java.util.TreeMap;

/**
 * The control plane at one moment, as the figures need it: kube-apiserver's and etcd's CPU time and
 * memory (from /proc) and the API server's own metrics; and the harness's core's time, since a harness
 * that leaves its core no idle time is starving the agents on it. Two readings make a profile's figures
 * ({@link #until}).
 */
record ControlPlaneReading(long nanos, double apiCpu, double etcdCpu, long apiRss, long apiPeakRss, long etcdRss, ProcFiles.CoreTicks harness,
        String metrics) {

    static ControlPlaneReading now(BenchApiServer api) {
        long apiPid = api.controlPlane().pid("kube-apiserver").orElseThrow();
        long etcdPid = api.controlPlane().pid("etcd").orElseThrow();
        String metrics = api.admin().raw("/metrics");
        return new ControlPlaneReading(System.nanoTime(), cpuSeconds(apiPid), cpuSeconds(etcdPid), status(apiPid, "VmRSS:"),
                status(apiPid, "VmHWM:"), status(etcdPid, "VmRSS:"), readHarnessTicks(), metrics == null ? "" : metrics);
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
                delta(later, "apiserver_terminated_watchers_total"), PromText.quantile(writes, 0.99), PromText.quantile(lists, 0.99),
                delta(later, "go_cpu_classes_gc_mark_idle_cpu_seconds_total") / seconds,
                delta(later, "apiserver_storage_list_total", l -> l.contains("resource=\"pods\"")),
                later.harness.busyShareSince(harness));
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
     * @param idleGcCores    of {@code apiCores}, the Go garbage collector's marking on time the API server had nothing
     *                       else to do: not needed, only taken because it was there (Go's own metric says to subtract it
     *                       for the compulsory cost); it grows with idle time, so a slow start shows more of it
     * @param podStorageLists pod lists (pages) the API server served from etcd rather than its watch cache: a page whose
     *                       snapshot the cache no longer holds (the apiserver's own object count lists pods from etcd
     *                       once a minute too)
     * @param harnessBusy    the share of the harness's core that was busy: near 1, the real agents and the watchers
     *                       on it were starved, and their latencies (and how they read) are the machine's, not the
     *                       API server's
     */
    record Cost(double seconds, double apiCores, double etcdCores, long apiRss, long apiPeakRss, long etcdRss, double watches,
            double deliveries, double bytesPerEvent, double terminated, double writeP99, double listP99, double idleGcCores,
            double podStorageLists, double harnessBusy) {

        /** The API server's CPU seconds over the profile, but for the garbage collector's idle-time marking. */
        double compulsoryApiCpu() {
            return (apiCores - idleGcCores) * seconds;
        }
    }

    private double delta(ControlPlaneReading later, String metric) {
        return delta(later, metric, labels -> true);
    }

    private double delta(ControlPlaneReading later, String metric, java.util.function.Predicate<String> which) {
        return PromText.total(later.metrics, metric, which) - PromText.total(metrics, metric, which);
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

    private static ProcFiles.CoreTicks readHarnessTicks() {
        try {
            return ProcFiles.coreTicks(CpuPinning.HARNESS);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read /proc/stat", e);
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
