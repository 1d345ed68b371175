package io.npmagent.pipelines.bandwidth;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.pipelines.bench.Iperf;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The flow control figures: a start's excess and first seconds from the server's intervals, the agent's counters, the tables. */
class FlowTablesTest {
    @Test
    void aStartIsReadFromTheServersIntervals() {
        // 50 Mbit/s: 6.25 MB a second. The first second carried 1.25 MB more; then the rate.
        List<Iperf.Interval> intervals = List.of(new Iperf.Interval(1.0, 7_500_000), new Iperf.Interval(1.0, 6_250_000),
                new Iperf.Interval(1.0, 6_250_000), new Iperf.Interval(1.0, 6_250_000), new Iperf.Interval(1.0, 6_250_000),
                new Iperf.Interval(1.0, 0));
        StartRun.Point p = StartRun.point(50_000_000, "x", intervals, new Iperf.Report(41_666_667, 3), EgressCounters.NONE);
        assertThat(p.firstSecondExcessBytes()).isEqualTo(1_250_000);
        assertThat(p.firstSecondsBits()).as("5 s, the sixth interval left out").isEqualTo(52_000_000);
        assertThat(p.retransmits()).isEqualTo(3);
        assertThat(FlowTables.start(List.of(p))).contains("+4.0%").contains("1250");
    }

    @Test
    void countersAreTheClientsEgress() {
        String metrics = """
                # HELP npm_bandwidth_horizon_drops_total x
                npm_bandwidth_horizon_drops_total{direction="egress",namespace="bw",pod="client"} 25.0
                npm_bandwidth_horizon_drops_total{direction="ingress",namespace="bw",pod="client"} 7.0
                npm_bandwidth_packets_total{direction="egress",namespace="bw",pod="client"} 975.0
                npm_bandwidth_packets_total{direction="egress",namespace="bw",pod="server"} 5.0
                npm_bandwidth_held_total{direction="egress",namespace="bw",pod="client"} 4.0
                npm_bandwidth_slowed_total{direction="egress",namespace="bw",pod="client"} 3.0
                npm_bandwidth_protected_total{direction="egress",namespace="bw",pod="client"} 2.0
                """;
        EgressCounters c = EgressCounters.of(metrics, "bw/client");
        assertThat(c).isEqualTo(new EgressCounters(975, 25, 2, 3, 4));
        assertThat(c.dropPercent()).isEqualTo(2.5);
    }

    @Test
    void protectionRowsSayTheSmallFlowsLatencyAndRetransmissions() {
        ProtectionRun.Point p = new ProtectionRun.Point(100_000_000, "back-pressure", 4, 95_000_000,
                new RrProbe.Latency(900, 400, 900, 1_500, 2_000, 2_500, 0, 9_000_000), 250_000, new EgressCounters(1000, 0, 5, 40, 2), null);
        String text = FlowTables.protection(List.of(p, ProtectionRun.Point.failed(1_000_000_000, "off", 4, "sandbox up: no")));
        assertThat(text).contains("back-pressure").contains("95 Mbit/s").contains("1500").contains("250.0").contains("FAILED: sandbox up: no");
        assertThat(FlowTables.json(List.of(p), List.of()).get(0)).containsEntry("small_p99_us", 1500.0).containsEntry("small_retransmits", 0L);
    }
}
