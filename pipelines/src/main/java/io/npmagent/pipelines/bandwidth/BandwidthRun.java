package io.npmagent.pipelines.bandwidth;

import io.npmagent.pipelines.bench.BenchSandbox;
import io.npmagent.pipelines.bench.Iperf;
import io.npmagent.pipelines.bench.TempDir;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Measures one point in a sandbox of its own: iperf3 from client to server for {@code seconds} after a
 * {@link #WARMUP_SECONDS} warm-up that is not counted (TCP's slow start and the shaper's first burst:
 * a token bucket, which both shapers are, lets a full bucket through at line rate), and for the
 * latency test the request/response probe over the same path during the measured window.
 */
final class BandwidthRun {
    static final int WARMUP_SECONDS = 2;
    static final String EGRESS = "egress";
    static final String INGRESS = "ingress";

    /** The probe's client runs beside iperf3's, on a thread of its own (the common pool may have one thread). */
    private static final ExecutorService PROBE = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "bandwidth-rrprobe");
        t.setDaemon(true);
        return t;
    });

    private final RrProbe rrprobe;
    private final int seconds;
    private final PrintStream log;

    BandwidthRun(RrProbe rrprobe, int seconds, PrintStream log) {
        this.rrprobe = rrprobe;
        this.seconds = seconds;
        this.log = log;
    }

    /**
     * @param shaper    {@code edt} (the pod's annotation, enforced by the agent), {@code tbf} (the CNI
     *                  plugin's shaping; egress only) or {@code none}
     * @param direction which pod is limited: {@code egress} the client's sending, {@code ingress} the
     *                  server's receiving
     * @param rate      the limit as an annotation value ({@code 100M}); ignored for {@code none}
     */
    BandwidthPoint measure(String test, String shaper, String direction, String rate, long limitBits, int streams, boolean probe,
            String sandboxName, String... upOptions) {
        String label = String.format(Locale.ROOT, "%s %s %s %s", test, shaper, direction, shaper.equals("none") ? "" : rate).strip();
        try (TempDir dir = TempDir.create("npm-bandwidth-")) {
            boolean edt = shaper.equals("edt");
            BandwidthManifests.write(dir.path(), edt && direction.equals(EGRESS) ? rate : null, edt && direction.equals(INGRESS) ? rate : null);
            long start = System.nanoTime();
            try (BenchSandbox sandbox = BenchSandbox.up(sandboxName, dir.path(), "bpf", 0, upOptions)) {
                if (shaper.equals("tbf")) {
                    TbfShaper.apply(sandboxName, BandwidthManifests.CLIENT, limitBits);
                }
                log.printf(Locale.ROOT, "# %s: sandbox %s up in %.1f s%n", label, sandboxName, (System.nanoTime() - start) / 1e9);
                sandbox.startServer(BandwidthManifests.SERVER, Iperf.server(BandwidthManifests.IPERF_PORT), Iperf.READY);
                if (probe) {
                    sandbox.startServer(BandwidthManifests.SERVER, rrprobe.server(BandwidthManifests.RR_PORT), "ready");
                }
                Duration timeout = Duration.ofSeconds(seconds + WARMUP_SECONDS + 60);
                CompletableFuture<RrProbe.Latency> latency = !probe ? CompletableFuture.completedFuture(null)
                        : CompletableFuture.supplyAsync(() -> {
                            try {
                                // Starts with iperf3: its own warm-up matches iperf3's, so both measure the same window.
                                return RrProbe.parse(sandbox.run(BandwidthManifests.CLIENT, rrprobe.client(BandwidthManifests.SERVER_IP,
                                        BandwidthManifests.RR_PORT, seconds - 1, WARMUP_SECONDS), timeout));
                            } catch (IOException e) {
                                throw new UncheckedIOException(e);
                            }
                        }, PROBE);
                Iperf.Report report = Iperf.report(sandbox.run(BandwidthManifests.CLIENT, Iperf.client(BandwidthManifests.SERVER_IP,
                        BandwidthManifests.IPERF_PORT, seconds, WARMUP_SECONDS, streams), timeout));
                RrProbe.Latency rr = latency.get();
                BandwidthPoint p = new BandwidthPoint(test, shaper, direction, limitBits, streams, report.bitsPerSecond(), report.retransmits(),
                        rr, null);
                log.printf(Locale.ROOT, "# %s: %.2f Mbit/s, %d retransmits%s%n", label, p.achievedBitsPerSecond() / 1e6, p.retransmits(),
                        rr == null ? "" : String.format(Locale.ROOT, ", RR p50 %.0f us p99 %.0f us p99.9 %.0f us (%d exchanges)",
                                rr.p50(), rr.p99(), rr.p999(), rr.count()));
                return p;
            }
        } catch (IOException | BenchSandbox.UpFailed | RuntimeException | ExecutionException e) {
            log.printf("# %s: FAILED: %s%n", label, e.getMessage());
            return BandwidthPoint.failed(test, shaper, direction, limitBits, streams, String.valueOf(e.getMessage()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return BandwidthPoint.failed(test, shaper, direction, limitBits, streams, "interrupted");
        }
    }
}
