package io.npmagent.pipelines.informers;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The informer benchmark, small: both measurements run in JVMs of their own against a real kube-apiserver,
 * list every pod (more than one page), and the agent's reaches its first apply with this node's pods
 * and every policy. Figures are printed, not judged.
 */
class InformerBenchSmokeTest {
    @TempDir
    Path tmp;

    @Test
    void listsEveryPodTwiceAndTheAgentAppliesTheWholeState() throws Exception {
        Path json = tmp.resolve("informers.json");
        int exit = new CommandLine(new InformerBenchMain()).execute("--pods", "1200", "--policies", "30", "--json", json.toString());
        assertThat(exit).isZero();
        JsonArray results = JsonParser.parseString(Files.readString(json)).getAsJsonObject().getAsJsonArray("results");
        assertThat(results).hasSize(2);
        JsonObject plain = results.get(0).getAsJsonObject();
        JsonObject agent = results.get(1).getAsJsonObject();
        assertThat(plain.get("mode").getAsString()).isEqualTo("plain");
        assertThat(plain.get("cached_pods").getAsInt()).isEqualTo(1200);
        assertThat(agent.get("cached_pods").getAsInt()).isEqualTo(1200);
        assertThat(agent.get("local_pods").getAsInt()).as("every tenth pod is on this node").isEqualTo(120);
        assertThat(agent.get("policies").getAsInt()).isEqualTo(30);
        assertThat(agent.get("first_apply_seconds").getAsDouble()).isPositive();
        assertThat(agent.get("cache_heap_bytes").getAsLong()).isPositive();
    }
}
