package io.npmagent.pipelines.bandwidth;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.dataplane.kernel.Measures;
import io.npmagent.pipelines.bench.BenchSandbox;
import io.npmagent.pipelines.bench.Iperf;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The egress shaper's flow control with real sockets in pods' cgroups, the client limited to 10M and on
 * CUBIC, once with flow control off and once with back-pressure (which includes protection):
 * <ul>
 *   <li>Protection: a UDP sender at five times the limit keeps the pod's queue at the horizon; beside
 *       it, a request/response flow of 1000-byte requests every 2 ms (one packet each, too large for the
 *       small-packet rule, 4 Mbit/s) has fewer than 2 packets in flight. Protected, it completes its
 *       exchanges with no retransmission and the agent counts protected packets; off, its requests are
 *       dropped with the rest, so it retransmits or stalls.</li>
 *   <li>Protection is no way around the limit: back-to-back exchanges (one packet in flight, but
 *       thousands a second on a node) get no more than the limit, and the bulk flow after them is not
 *       starved.</li>
 *   <li>Back-pressure: a bulk TCP flow is told to slow down (slowed or held, counted) and retransmits
 *       less than the same flow under the packets-only shaper.</li>
 * </ul>
 * The two rates asserted are bounds of the configured limit (no more than it and one horizon's burst; not
 * starved below half of it), the product's promise, not a speed (pipelines/README.md, "Which tests assert
 * a rate").
 */
@Measures
class FlowControlKernelTest {
    private static final String LIMIT = "10M";
    private static final double LIMIT_MBIT = 10;

    @TempDir
    Path dir;

    record Outcome(CommandResult rr, RrProbe.Latency pingPong, Iperf.Report bulk, EgressCounters counters) {
        long bulkRetransmits() {
            return bulk.retransmits();
        }
    }

    @Test
    void protectionKeepsAFewPacketFlowAliveAndBackPressureSlowsTcpInsteadOfDropping() throws Exception {
        KernelTestSupport.require("python3", "setsid", "iperf3", "cc");
        RrProbe rrprobe = RrProbe.build();
        Outcome off = run(rrprobe, "off");
        Outcome on = run(rrprobe, "back-pressure");

        assertThat(on.rr().ok()).as("protected: the request/response flow completes: " + on.rr().errorSummary()).isTrue();
        RrProbe.Latency protectedRr = RrProbe.parse(on.rr());
        assertThat(protectedRr.retransmits()).as("protected: no retransmission").isZero();
        assertThat(protectedRr.count()).as("protected: exchanges").isGreaterThan(50);
        assertThat(on.counters().protectedPackets()).as("protected packets counted").isPositive();
        assertThat(off.rr().ok() ? RrProbe.parse(off.rr()).retransmits() : -1).as("off: the flow's requests are dropped with the rest: "
                + off.rr().stdout()).isNotZero();
        assertThat(off.counters().protectedPackets()).isZero();

        double pingPongMbit = on.pingPong().bytes() * 8 / 3e6;
        assertThat(pingPongMbit).as("back-to-back exchanges, protected, stay within the limit and one horizon's burst over 3 s")
                .isLessThan(LIMIT_MBIT * (3 + 1) / 3.0);
        assertThat(on.bulk().bitsPerSecond() / 1e6).as("the bulk flow after them is not starved: at least half its limit")
                .isGreaterThan(LIMIT_MBIT / 2);

        assertThat(on.counters().slowed() + on.counters().held()).as("back-pressure: TCP told to slow down").isPositive();
        assertThat(on.bulkRetransmits()).as("back-pressure retransmits less than packets only (%d)", off.bulkRetransmits())
                .isLessThan(off.bulkRetransmits());
        assertThat(off.counters().slowed() + off.counters().held()).isZero();
    }

    private Outcome run(RrProbe rrprobe, String flowControl) throws Exception {
        String name = "fc-" + ProcessHandle.current().pid() % 100000;
        BandwidthManifests.writeClient(dir, LIMIT, "cubic");
        try (BenchSandbox sandbox = BenchSandbox.up(name, dir, "bpf", 0, "--edt-flow-control", flowControl)) {
            sandbox.startServer(BandwidthManifests.SERVER, Iperf.server(BandwidthManifests.IPERF_PORT), Iperf.READY);
            sandbox.startServer(BandwidthManifests.SERVER, rrprobe.server(BandwidthManifests.RR_PORT), "ready");
            CompletableFuture<CommandResult> flood = CompletableFuture.supplyAsync(() -> run(sandbox,
                    Iperf.udpClient(BandwidthManifests.SERVER_IP, BandwidthManifests.IPERF_PORT, 6, "50M", 1400), 30));
            CommandResult rr = run(sandbox, rrprobe.client(BandwidthManifests.SERVER_IP, BandwidthManifests.RR_PORT, 3, 1, 1000, 32, 2000), 10);
            flood.get();
            RrProbe.Latency pingPong = RrProbe.parse(run(sandbox, rrprobe.client(BandwidthManifests.SERVER_IP, BandwidthManifests.RR_PORT, 3, 0,
                    1000, 32, 0), 30));
            Iperf.Report bulk = Iperf.report(sandbox.run(BandwidthManifests.CLIENT, Iperf.client(BandwidthManifests.SERVER_IP,
                    BandwidthManifests.IPERF_PORT, 5, 0), Duration.ofSeconds(30)));
            Thread.sleep(1500); // the agent writes its metrics every second
            EgressCounters counters = EgressCounters.of(sandbox.metrics(), BandwidthManifests.CLIENT);
            System.out.printf("flow control %s: request/response %s; back to back %s; bulk %.2f Mbit/s, %d retransmits; %s%n", flowControl,
                    rr.ok() ? rr.stdout().strip() : "failed: " + rr.errorSummary(), pingPong, bulk.bitsPerSecond() / 1e6, bulk.retransmits(),
                    counters);
            return new Outcome(rr, pingPong, bulk, counters);
        }
    }

    private static CommandResult run(BenchSandbox sandbox, java.util.List<String> argv, int seconds) {
        try {
            return sandbox.run(BandwidthManifests.CLIENT, argv, Duration.ofSeconds(seconds));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
