package io.npmagent.pipelines.scale;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A report with a run that fell behind still writes: its figures are null in JSON and "-" in the table. */
class ScaleReportTest {
    @TempDir
    Path tmp;

    @Test
    void aRunThatFellBehindIsReportedWithoutFigures() throws Exception {
        AgentScaleResult ok = new AgentScaleResult("churn", "bpf", true, 10_000, 1_000, 7.0, 0.2, 0.9, 1.1, 0.3, 0.95, 0.02, 70L << 20,
                400L << 20, 15.0, 12_000, List.of(0.1, 0.2, 0.9, 1.1), null, new AgentScaleResult.ClusterCost(12.5, 10_000, 300L << 20, 90L << 20));
        AgentScaleResult behind = AgentScaleResult.failed(ScaleScenario.of("churn", false), "bpf", false, Double.NaN,
                "the agent fell behind: 0 policy changes and 2,167 events waiting, for 15 s\nlog line");
        List<Path> written = ScaleReport.write(tmp, "pipelines/scale --scenario churn", List.of(ok, behind));
        assertThat(written).extracting(p -> p.getFileName().toString())
                .containsExactly("scale.json", "scale.md", "latency-vs-scale.png", "latency-distribution-churn.png");
        JsonObject row = JsonParser.parseString(Files.readString(tmp.resolve("scale.json"))).getAsJsonObject().getAsJsonArray("results")
                .get(1).getAsJsonObject();
        assertThat(row.get("p99_seconds").isJsonNull()).isTrue();
        assertThat(row.get("failure").getAsString()).startsWith("the agent fell behind");
        assertThat(Files.readString(tmp.resolve("scale.md"))).contains("| churn | bpf | off |").contains("**the agent fell behind: 0 policy");
    }
}
