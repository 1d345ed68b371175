package io.npmagent.pipelines.scale;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A report with a run that fell behind still writes (its figures null in JSON, "-" in the table), keeps every
 * sample, and puts each mode's runs side by side.
 */
class ScaleReportTest {
    @TempDir
    Path tmp;

    @Test
    void aRunThatFellBehindIsReportedWithoutFiguresAndRepeatsAreSummed() throws Exception {
        AgentScaleResult ok = new AgentScaleResult("churn", "bpf", "adaptive", 1, 10_000, 1_000, new AgentScaleResult.Boot(7.0, 5.0, 1.5), AgentScaleResult.Npm640Time.NONE,
                new AgentScaleResult.Latency(List.of(0.1, 0.2, 0.9, 1.1)), 0.3, 0.95, 0.02, 12.5, 12.5, 70L << 20, 400L << 20, 15.0, 12_000, 120.0,
                null, null, new AgentScaleResult.ClusterCost(12.5, 10_000, 300L << 20, 90L << 20));
        AgentScaleResult second = new AgentScaleResult("churn", "bpf", "adaptive", 2, 10_000, 1_000, new AgentScaleResult.Boot(7.0, 5.0, 1.5), AgentScaleResult.Npm640Time.NONE,
                new AgentScaleResult.Latency(List.of(0.05, 0.3)), 0.3, 0.95, 0.02, 12.5, 12.5, 70L << 20, 400L << 20, 15.0, 12_000, 120.0,
                "2 flips, not 300: the event phase stops after 600 s", null, null);
        AgentScaleResult behind = AgentScaleResult.failed(ScaleScenario.of("churn", false), "bpf", QueueMode.FOREGROUND, 1, Double.NaN,
                "the agent fell behind: 0 policy changes and 2,167 events waiting, for 15 s\nlog line");
        List<Path> written = ScaleReport.write(tmp, "pipelines/scale --scenario churn", List.of(ok, second, behind));
        assertThat(written).extracting(p -> p.getFileName().toString())
                .containsExactly("scale.json", "scale.md", "latency-vs-scale.png", "latency-distribution-churn.png");
        var rows = JsonParser.parseString(Files.readString(tmp.resolve("scale.json"))).getAsJsonObject().getAsJsonArray("results");
        JsonObject row = rows.get(2).getAsJsonObject();
        assertThat(row.get("p99_seconds").isJsonNull()).isTrue();
        assertThat(row.get("failure").getAsString()).startsWith("the agent fell behind");
        assertThat(rows.get(0).getAsJsonObject().getAsJsonArray("probe_seconds")).as("every sample kept").hasSize(4);
        assertThat(rows.get(0).getAsJsonObject().get("p90_seconds").getAsDouble()).isEqualTo(1.1);
        String md = Files.readString(tmp.resolve("scale.md"));
        assertThat(md).contains("| churn | bpf | foreground | 1 |").contains("**the agent fell behind: 0 policy")
                .contains("ok, 2 flips, not 300");
        assertThat(md).as("the two adaptive runs side by side: each p99, the spread, all six flips pooled")
                .contains("| churn | bpf | adaptive | 2 | 6 | 1.100, 0.300 | 0.300-1.100 | 0.200 | 1.100 |");
    }

    @Test
    void npm640IsSplitIntoTheApiServersCreationAndTheAgentsTail() throws Exception {
        AgentScaleResult run = new AgentScaleResult("npm640", "nft", "adaptive", 1, 1_280, 640, new AgentScaleResult.Boot(3.0, 1.0, 0.5),
                new AgentScaleResult.Npm640Time(1.5, 2.25), new AgentScaleResult.Latency(List.of(0.05)), 0.01, 0.02, 0.01, 8, 8, 70L << 20,
                400L << 20, 5.0, 100, 30.0, null, null, null);
        ScaleReport.write(tmp, "pipelines/scale --scenario npm640", List.of(run));
        JsonObject row = JsonParser.parseString(Files.readString(tmp.resolve("scale.json"))).getAsJsonObject().getAsJsonArray("results")
                .get(0).getAsJsonObject();
        assertThat(row.get("npm640_created_seconds").getAsDouble()).isEqualTo(1.5);
        assertThat(row.get("npm640_tail_seconds").getAsDouble()).isEqualTo(0.75);
        assertThat(Files.readString(tmp.resolve("scale.md"))).contains("| 2.250 (1.500 + 0.750) |").contains("| 2.250 | 0.750 |");
    }

    @Test
    void percentilesAreByNearestRank() {
        List<Double> samples = new java.util.ArrayList<>();
        for (int i = 300; i >= 1; i--) {
            samples.add(i / 1000.0);
        }
        AgentScaleResult.Latency l = new AgentScaleResult.Latency(samples);
        assertThat(l.count()).isEqualTo(300);
        assertThat(l.p50()).isEqualTo(0.150);
        assertThat(l.p90()).isEqualTo(0.270);
        assertThat(l.p99()).as("the 297th of 300").isEqualTo(0.297);
        assertThat(l.max()).isEqualTo(0.300);
    }
}
