package io.npmagent.pipelines.scale;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The scale pipeline's short mode, as CI runs it, so it cannot rot: the churn scenario through the whole
 * agent (a real API server, npm-agent run, a node of namespaces) with adaptive batching on the eBPF backend and
 * then on nft, one cluster for both. Every run boots, keeps up, converges and has every probe flip enforced with
 * packets; the report has the fields and charts that are real images. About two minutes. (The large
 * scenario and the fixed-interval queue are the same code with other numbers; the full pipeline runs them.)
 */
class ScaleAgentSmokeKernelTest {
    @TempDir
    Path tmp;

    @Test
    void theChurnScenarioRunsShortOnBpfAndNftAndWritesItsReport() throws Exception {
        KernelTestSupport.require("ip", "nft", "mount", "umount");
        Path report = tmp.resolve("report");
        int exit = new CommandLine(new ScaleMain()).execute("--scenario", "churn", "--short", "--backend", "bpf", "--backend", "nft",
                "--mode", "adaptive", "--out", report.toString());
        assertThat(exit).as("bpf and nft, background").isZero();
        JsonArray results = JsonParser.parseString(Files.readString(report.resolve("scale.json"))).getAsJsonObject().getAsJsonArray("results");
        assertThat(results).hasSize(2);
        for (var e : results) {
            JsonObject r = e.getAsJsonObject();
            assertThat(r.get("failure").isJsonNull()).as("%s", r).isTrue();
            assertThat(r.get("first_apply_seconds").getAsDouble()).isPositive();
            assertThat(r.get("list_seconds").getAsDouble()).as("the agent's own npm_startup_seconds").isPositive()
                    .isLessThan(r.get("first_apply_seconds").getAsDouble());
            assertThat(r.get("compile_and_apply_seconds").getAsDouble()).isPositive();
            assertThat(r.get("p50_seconds").getAsDouble()).isPositive().isLessThanOrEqualTo(r.get("p99_seconds").getAsDouble());
            assertThat(r.get("p99_seconds").getAsDouble()).isLessThanOrEqualTo(r.get("max_seconds").getAsDouble());
            assertThat(r.get("probes").getAsInt()).as("--short times at least 20 flips").isGreaterThanOrEqualTo(20);
            assertThat(r.getAsJsonArray("probe_seconds")).hasSize(r.get("probes").getAsInt());
            assertThat(r.get("batches_per_second").getAsDouble()).isPositive();
            assertThat(r.get("events").getAsInt()).as("churn and edits written").isGreaterThan(400);
            assertThat(r.get("heap_bytes").getAsLong()).isPositive();
            assertThat(r.get("rss_bytes").getAsLong()).isPositive();
            assertThat(r.get("cpu_seconds").getAsDouble()).isPositive();
            assertThat(r.get("agent_p99_seconds").getAsDouble()).isPositive();
        }
        for (String png : new String[] {"latency-vs-scale.png", "latency-distribution-churn.png"}) {
            BufferedImage image = ImageIO.read(report.resolve(png).toFile());
            assertThat(image).as(png).isNotNull();
            assertThat(image.getWidth()).isEqualTo(1000);
        }
        assertThat(Files.readString(report.resolve("scale.md"))).contains("| churn | bpf | adaptive | 1 |", "| churn | nft | adaptive | 1 |");
    }
}
