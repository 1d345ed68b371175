package io.npmagent.pipelines.bandwidth;

import io.npmagent.pipelines.bench.BenchSandbox;
import io.npmagent.pipelines.bench.Iperf;
import io.npmagent.pipelines.bench.TempDir;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A flow's start under the client's egress limit: one CUBIC iperf3 stream from a fresh sandbox (the
 * pod's shaper has no history, as after idle), nothing omitted, the server's per-second report read.
 * Without fq the EDT shaper is a policer whose depth is the horizon, so a starting flow sends up to a
 * horizon's worth above the rate at once; how much, and what it costs in retransmissions, is what this
 * compares between shaper settings.
 */
final class StartRun {
    /** The window the bar averages over: the first 5 seconds, start included. */
    static final int FIRST_SECONDS = 5;

    /**
     * One row: bytes received above the limit in the first second, the average over the first 5 s and
     * over the whole run, the sender's retransmissions, the agent's counters.
     */
    record Point(long limitBits, String shaper, double firstSecondExcessBytes, double firstSecondsBits, double goodputBits, long retransmits,
            EgressCounters counters, String error) {
        static Point failed(long limit, String shaper, String error) {
            return new Point(limit, shaper, Double.NaN, Double.NaN, Double.NaN, 0, EgressCounters.NONE, error);
        }

        boolean ok() {
            return error == null;
        }
    }

    private final int seconds;
    private final PrintStream log;

    StartRun(int seconds, PrintStream log) {
        this.seconds = Math.max(seconds, FIRST_SECONDS);
        this.log = log;
    }

    /** @param shaper a label for the settings {@code upOptions} give the sandbox's agent */
    Point measure(String rate, long limitBits, String shaper, String sandboxName, List<String> upOptions) {
        String label = String.format(Locale.ROOT, "start %s %s", rate, shaper);
        try (TempDir dir = TempDir.create("npm-bandwidth-")) {
            BandwidthManifests.writeClient(dir.path(), rate, "cubic");
            try (BenchSandbox sandbox = BenchSandbox.up(sandboxName, dir.path(), "bpf", 0, upOptions.toArray(String[]::new))) {
                sandbox.startServer(BandwidthManifests.SERVER, Iperf.server(BandwidthManifests.IPERF_PORT), Iperf.READY);
                var run = sandbox.run(BandwidthManifests.CLIENT, Iperf.clientFromStart(BandwidthManifests.SERVER_IP, BandwidthManifests.IPERF_PORT,
                        seconds), Duration.ofSeconds(seconds + 60));
                Iperf.Report report = Iperf.report(run);
                List<Iperf.Interval> intervals = Iperf.receivedIntervals(run);
                Thread.sleep(1500); // the agent writes its metrics every second
                EgressCounters counters = EgressCounters.of(sandbox.metrics(), BandwidthManifests.CLIENT);
                Point p = point(limitBits, shaper, intervals, report, counters);
                log.printf(Locale.ROOT, "# %s: first second %.0f KB above the rate, first %d s %.2f Mbit/s, goodput %.2f Mbit/s, %d retransmits, "
                                + "horizon drops %d, held %d, slowed %d%n", label, p.firstSecondExcessBytes() / 1e3, FIRST_SECONDS,
                        p.firstSecondsBits() / 1e6, p.goodputBits() / 1e6, p.retransmits(), counters.horizonDrops(), counters.held(), counters.slowed());
                return p;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Point.failed(limitBits, shaper, "interrupted");
        } catch (Exception e) {
            log.printf("# %s: FAILED: %s%n", label, e.getMessage());
            return Point.failed(limitBits, shaper, String.valueOf(e.getMessage()));
        }
    }

    /** The figures of one run from the server's intervals. */
    static Point point(long limitBits, String shaper, List<Iperf.Interval> intervals, Iperf.Report report, EgressCounters counters) {
        if (intervals.isEmpty()) {
            throw new IllegalArgumentException("iperf3's server reported no interval");
        }
        Iperf.Interval first = intervals.get(0);
        double excess = Math.max(0, first.bytes() - limitBits / 8.0 * first.seconds());
        double t = 0;
        long bytes = 0;
        for (Iperf.Interval i : intervals) {
            if (t + i.seconds() > FIRST_SECONDS + 0.05) {
                break;
            }
            t += i.seconds();
            bytes += i.bytes();
        }
        return new Point(limitBits, shaper, excess, bytes * 8.0 / t, report.bitsPerSecond(), report.retransmits(), counters, null);
    }
}
