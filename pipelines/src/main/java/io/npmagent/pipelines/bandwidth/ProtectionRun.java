package io.npmagent.pipelines.bandwidth;

import io.npmagent.pipelines.bench.BenchSandbox;
import io.npmagent.pipelines.bench.TempDir;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The HBM seed's table, one row: under the client's egress limit, one small request/response flow
 * (10 KB each way, a request every 10 ms: a service's steady trickle, where a node's microsecond round
 * trips would otherwise make a ping-pong a bulk flow) beside {@code bulkFlows} bulk flows (1 MB
 * requests back to back, 64-byte answers), all CUBIC
 * ({@code npm-agent.io/tcp-congestion}), for {@code seconds} after a warm-up, with the shaper's flow
 * control set to one mode. A sandbox of its own per row, so the agent's counters are the row's.
 */
final class ProtectionRun {
    static final int SMALL_BYTES = 10_000;
    static final int BULK_BYTES = 1_000_000;
    static final int BULK_ANSWER_BYTES = 64;
    static final long SMALL_INTERVAL_MICROS = 10_000;

    private static final ExecutorService FLOWS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "bandwidth-flow");
        t.setDaemon(true);
        return t;
    });

    /**
     * One row; {@code bulkP99Us} is the worst bulk flow's p99. {@code error} is set when the row failed.
     */
    record Point(long limitBits, String flowControl, int bulkFlows, double aggregateBits, RrProbe.Latency small, double bulkP99Us,
            EgressCounters counters, String error) {
        static Point failed(long limit, String flowControl, int bulkFlows, String error) {
            return new Point(limit, flowControl, bulkFlows, 0, null, Double.NaN, EgressCounters.NONE, error);
        }

        boolean ok() {
            return error == null;
        }
    }

    private final RrProbe rrprobe;
    private final int seconds;
    private final PrintStream log;

    ProtectionRun(RrProbe rrprobe, int seconds, PrintStream log) {
        this.rrprobe = rrprobe;
        this.seconds = seconds;
        this.log = log;
    }

    Point measure(String rate, long limitBits, String flowControl, int bulkFlows, String sandboxName, List<String> upOptions) {
        String label = String.format(Locale.ROOT, "protection %s %s", rate, flowControl);
        try (TempDir dir = TempDir.create("npm-bandwidth-")) {
            BandwidthManifests.writeClient(dir.path(), rate, "cubic");
            List<String> up = new ArrayList<>(upOptions);
            up.addAll(List.of("--edt-flow-control", flowControl));
            try (BenchSandbox sandbox = BenchSandbox.up(sandboxName, dir.path(), "bpf", 0, up.toArray(String[]::new))) {
                sandbox.startServer(BandwidthManifests.SERVER, rrprobe.server(BandwidthManifests.RR_PORT), "ready");
                Duration timeout = Duration.ofSeconds(seconds + BandwidthRun.WARMUP_SECONDS + 60);
                List<CompletableFuture<RrProbe.Latency>> flows = new ArrayList<>();
                flows.add(flow(sandbox, SMALL_BYTES, SMALL_BYTES, SMALL_INTERVAL_MICROS, timeout));
                for (int i = 0; i < bulkFlows; i++) {
                    flows.add(flow(sandbox, BULK_BYTES, BULK_ANSWER_BYTES, 0, timeout));
                }
                List<RrProbe.Latency> done = new ArrayList<>();
                for (CompletableFuture<RrProbe.Latency> f : flows) {
                    done.add(f.get());
                }
                Thread.sleep(1500); // the agent writes its metrics every second
                EgressCounters counters = EgressCounters.of(sandbox.metrics(), BandwidthManifests.CLIENT);
                double aggregate = done.stream().mapToLong(RrProbe.Latency::bytes).sum() * 8.0 / seconds;
                double bulkP99 = done.subList(1, done.size()).stream().mapToDouble(RrProbe.Latency::p99).max().orElse(Double.NaN);
                RrProbe.Latency small = done.get(0);
                log.printf(Locale.ROOT, "# %s: %.1f Mbit/s, small flow p90 %.0f us p99 %.0f us (%d exchanges, %d retransmits), bulk p99 %.0f us, "
                                + "horizon drops %.2f%%, held %d, slowed %d, protected %d%n", label, aggregate / 1e6, small.p90(), small.p99(),
                        small.count(), small.retransmits(), bulkP99, counters.dropPercent(), counters.held(), counters.slowed(),
                        counters.protectedPackets());
                return new Point(limitBits, flowControl, bulkFlows, aggregate, small, bulkP99, counters, null);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Point.failed(limitBits, flowControl, bulkFlows, "interrupted");
        } catch (Exception e) {
            log.printf("# %s: FAILED: %s%n", label, e.getMessage());
            return Point.failed(limitBits, flowControl, bulkFlows, String.valueOf(e.getMessage()));
        }
    }

    private CompletableFuture<RrProbe.Latency> flow(BenchSandbox sandbox, int request, int response, long intervalMicros, Duration timeout) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return RrProbe.parse(sandbox.run(BandwidthManifests.CLIENT, rrprobe.client(BandwidthManifests.SERVER_IP, BandwidthManifests.RR_PORT,
                        seconds, BandwidthRun.WARMUP_SECONDS, request, response, intervalMicros), timeout));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, FLOWS);
    }
}
