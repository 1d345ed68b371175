package io.npmagent.pipelines.bandwidth;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.harness.sandbox.Sandbox;
import io.npmagent.bpf.libbpf.NetnsThread;
import io.npmagent.bpf.libbpf.Rtnetlink;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.dataplane.kernel.Measures;
import io.npmagent.pipelines.bench.BenchSandbox;
import io.npmagent.pipelines.bench.Iperf;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --big-tcp} in a sandbox (routed pods): the agent raises the IPv4 GSO/GRO limits of both ends of
 * each pod's veth to 192 KiB as it attaches, leaves IPv6's at 64 KiB (a routed node's IPv6 forwarding
 * refuses larger packets), and the client's egress limit of 50M holds within 5%, as in
 * {@link BandwidthKernelTest} without BIG TCP (at 1G, where TCP builds the large packets, pipelines/datapath --big-tcp).
 */
@Measures
class BigTcpKernelTest {
    @TempDir
    Path dir;

    @Test
    void bothEndsOfEachPodsVethAreRaisedForIpv4AndTheRateLimitHolds() throws Exception {
        KernelTestSupport.require("python3", "setsid", "iperf3");
        String name = "bigtcp-" + ProcessHandle.current().pid() % 100000;
        BandwidthManifests.write(dir, "50M", null);
        try (BenchSandbox sandbox = BenchSandbox.up(name, dir, "bpf", 0, "--big-tcp")) {
            sandbox.startServer(BandwidthManifests.SERVER, Iperf.server(BandwidthManifests.IPERF_PORT), Iperf.READY);
            for (String pod : List.of(BandwidthManifests.CLIENT, BandwidthManifests.SERVER)) {
                Rtnetlink.Link podEnd = podEnd(sandbox.netns(pod));
                Rtnetlink.Link nodeEnd;
                try (NetnsThread node = NetnsThread.enter(Sandbox.named(name).node(0).netns())) {
                    nodeEnd = node.get(() -> Rtnetlink.link(podEnd.peer()));
                }
                for (Rtnetlink.Link end : List.of(podEnd, nodeEnd)) {
                    assertThat(end.gsoIpv4MaxSize()).as(pod + " gso_ipv4_max_size, interface " + end.ifindex()).isEqualTo(196_608);
                    assertThat(end.groIpv4MaxSize()).as(pod + " gro_ipv4_max_size").isEqualTo(196_608);
                    assertThat(end.gsoMaxSize()).as(pod + " gso_max_size (IPv6): routed, left").isEqualTo(65_536);
                }
            }
            // Never above the limit, on any run; within 5% of it on one of up to three. Without sch_fq (none on
            // this kernel) EDT bounds the rate by dropping past the horizon, and a drop here is a whole 192 KiB
            // GSO packet: one run of one TCP stream can back off and settle below the rate (CI saw 42.4 once).
            List<Double> runs = new java.util.ArrayList<>();
            for (int i = 0; i < 3 && (runs.isEmpty() || runs.get(runs.size() - 1) < 47.5); i++) {
                runs.add(BandwidthKernelTest.mbit(sandbox));
            }
            assertThat(runs).as("client egress 50M with BIG TCP, every run").allSatisfy(r -> assertThat(r).isLessThanOrEqualTo(52.5));
            assertThat(runs.get(runs.size() - 1)).as("client egress 50M with BIG TCP, runs " + runs).isBetween(47.5, 52.5);
        }
        assertThat(Sandbox.named(name).namespaces()).as("sandbox down").isEmpty();
    }

    private static Rtnetlink.Link podEnd(String netns) throws Exception {
        try (NetnsThread pod = NetnsThread.enter(netns)) {
            return pod.get(() -> Rtnetlink.link("eth0"));
        }
    }
}
