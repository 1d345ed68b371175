package io.npmagent.pipelines.bandwidth;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.harness.sandbox.Convergence;
import io.npmagent.harness.sandbox.Sandbox;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.dataplane.kernel.Measures;
import io.npmagent.pipelines.bench.BenchSandbox;
import io.npmagent.pipelines.bench.Iperf;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pods' bandwidth annotations enforced with real traffic, in one sandbox whose directory changes under
 * it: the client annotated {@code egress-bandwidth: 50M} sends to the server at 50 Mbit/s within 5%
 * (iperf3, one stream, after a warm-up); then only the server annotated {@code ingress-bandwidth: 50M}
 * receives within 5%; then with no annotation the 50M limit is gone (more than twice it: how much more
 * the path carries is the machine's speed, measured by {@code pipelines/bandwidth}, not asserted). What
 * iperf3 measures is what arrived at the server. The rates asserted are the product's promise, a
 * configured limit held, not a benchmark (pipelines/README.md, "Which tests assert a rate").
 */
@Measures
class BandwidthKernelTest {
    private static final int SECONDS = 8;

    @TempDir
    Path dir;

    @Test
    void annotationsLimitBothDirectionsAndTheirRemovalLiftsTheLimit() throws Exception {
        KernelTestSupport.require("python3", "setsid", "iperf3");
        String name = "bwtest-" + ProcessHandle.current().pid() % 100000;
        BandwidthManifests.write(dir, "50M", null);
        try (BenchSandbox sandbox = BenchSandbox.up(name, dir, "bpf", 0)) {
            sandbox.startServer(BandwidthManifests.SERVER, Iperf.server(BandwidthManifests.IPERF_PORT), Iperf.READY);

            assertThat(mbit(sandbox)).as("client egress 50M").isBetween(47.5, 52.5);

            BandwidthManifests.write(dir, null, "50M");
            Convergence.await(Sandbox.named(name), Duration.ofSeconds(60));
            assertThat(mbit(sandbox)).as("server ingress 50M").isBetween(47.5, 52.5);

            BandwidthManifests.write(dir, null, null);
            Convergence.await(Sandbox.named(name), Duration.ofSeconds(60));
            assertThat(mbit(sandbox)).as("no annotation: the 50M limit is lifted").isGreaterThan(2 * 50);
        }
        assertThat(Sandbox.named(name).namespaces()).as("sandbox down").isEmpty();
    }

    /** The client's rate to the server over {@value #SECONDS} s after a warm-up, in Mbit/s (also used by {@link BigTcpKernelTest}). */
    static double mbit(BenchSandbox sandbox) throws Exception {
        Iperf.Report r = Iperf.report(sandbox.run(BandwidthManifests.CLIENT, Iperf.client(BandwidthManifests.SERVER_IP,
                BandwidthManifests.IPERF_PORT, SECONDS, BandwidthRun.WARMUP_SECONDS), Duration.ofSeconds(60)));
        System.out.printf("bandwidth: %.2f Mbit/s, %d retransmits%n", r.bitsPerSecond() / 1e6, r.retransmits());
        return r.bitsPerSecond() / 1e6;
    }
}
