package io.npmagent.pipelines.datapath;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.agent.backend.Backends;
import io.npmagent.harness.sandbox.Sandbox;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class DatapathTableTest {
    private static final List<DatapathPoint> POINTS = List.of(
            DatapathPoint.skipped("bpf", "not a backend of this build"),
            DatapathPoint.ok("nft", 0, samples(List.of(9000.0, 10000.0, 11000.0), List.of(8000.0), List.of(20.0, 21.0, 19.0)), false, false),
            DatapathPoint.ok("nft", 100, samples(List.of(9690.0, 9690.0, 20000.0), List.of(4000.0), List.of(20.0, 20.0, 20.0)), true, true),
            DatapathPoint.ok("nft", 1000, samples(List.of(5000.0), List.of(), List.of()), false, false),
            DatapathPoint.ok("bpf", 0, samples(List.of(100.0), List.of(100.0), List.of()), false, true),
            DatapathPoint.ok("bpf", 10, samples(List.of(100.0), List.of(100.0), List.of()), true, false),
            DatapathPoint.failed("iptables-nft", 100, "sandbox up: it broke\nand more"));

    private static DatapathPoint.Samples samples(List<Double> connections, List<Double> viaService, List<Double> gbits) {
        return new DatapathPoint.Samples(connections, viaService, gbits);
    }

    @Test
    void rowsSayHowEachPointComparesWithNoPolicies() {
        String table = DatapathTable.text(POINTS);
        assertThat(table.lines().toList()).containsExactly(
                "backend          policies     conn/s     vs 0 svc conn/s     vs 0   Gbit/s  intruder",
                "bpf                     -  skipped: not a backend of this build",
                "nft                     0      10000     base       8000     base    20.00  open",
                "nft                   100       9690    -3.1%       4000   -50.0%    20.00  blocked",
                "nft                  1000       5000   -50.0%          -        -        -  OPEN (policies not enforced)",
                "bpf                     0        100     base        100     base        -  BLOCKED (no policy selects the server) through the ClusterIP",
                "bpf                    10        100    +0.0%        100    +0.0%        -  OPEN (policies not enforced) through the ClusterIP",
                "iptables-nft          100  failed: sandbox up: it broke ...");
    }

    @Test
    void theMedianIsTheMiddleSample() {
        assertThat(DatapathPoint.median(List.of(3.0, 1.0, 2.0))).isEqualTo(2.0);
        assertThat(DatapathPoint.median(List.of(4.0, 1.0))).isEqualTo(2.5);
        assertThat(DatapathPoint.median(List.of())).isNaN();
    }

    @Test
    void jsonHasEveryRowAndNoNaN() {
        String json = DatapathTable.json("pipelines/datapath --backend nft", POINTS);
        assertThat(json).contains("\"command\": \"pipelines/datapath --backend nft\"")
                .contains("\"connectionsVsNone\": -0.031")
                .contains("\"serviceConnectionsVsNone\": -0.5")
                .contains("\"status\": \"skipped\"")
                .contains("\"gbitPerSecond\": null")
                .doesNotContain("NaN");
    }

    @Test
    void sandboxNamesAreValidForEveryBackend() {
        List<String> names = new ArrayList<>(Backends.NAMES);
        names.add("bpf");
        names.add("Some_Very-Long backend name");
        for (String backend : names) {
            String name = DatapathMain.sandboxName(backend);
            assertThat(name).startsWith("dp-");
            assertThat(Sandbox.named(name).name()).isEqualTo(name); // throws when invalid
        }
    }

    @Test
    void unknownBackendsAreSkippedWithTheReason() {
        assertThat(DatapathMain.skipReason("no-such-backend")).hasValueSatisfying(r -> assertThat(r).contains("not a backend of this build"));
    }
}
