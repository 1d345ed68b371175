package io.npmagent.harness.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonParser;
import io.npmagent.agent.backend.Backends;
import io.npmagent.agent.flows.FlowFixtures;
import io.npmagent.agent.http.AgentHttp;
import io.npmagent.agent.run.Agent;
import io.npmagent.dataplane.backend.FakeBackend;
import io.npmagent.dataplane.batch.QueueConfig;
import io.npmagent.dataplane.metrics.Metrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** sandbox flows' plumbing: each node's agent found where the sandbox told it to listen, asked, and the answers merged as written. */
class SandboxFlowsTest {
    @TempDir
    Path dir;

    @Test
    void aNodesAgentIsAskedAtTheAddressTheSandboxGaveItAndItsLinesPassedOnAsWritten() throws Exception {
        PrometheusRegistry registry = new PrometheusRegistry();
        FakeBackend backend = new FakeBackend();
        try (Agent agent = new Agent(new Backends.Chosen(backend, "fake"), "sandbox-n1", QueueConfig.DEFAULTS, registry, new Metrics(registry),
                Duration.ofMinutes(1))) {
            agent.start(FlowFixtures.cluster());
            backend.flows().report(FlowFixtures.deniedIngress(backend.flows().refs(), 2, 1));
            try (AgentHttp http = AgentHttp.start(new InetSocketAddress("127.0.0.1", 0), new InetSocketAddress("127.0.0.1", 0), agent, () -> null,
                    Map::of)) {
                // As SandboxDaemon.AgentRun writes it.
                Files.writeString(dir.resolve("agent-config.json"), "{\"ListeningAddress\": \"127.0.0.1\", \"ListeningPort\": 1"
                        + ", \"DebugListeningAddress\": \"127.0.0.1\", \"DebugListeningPort\": " + http.debugAddress().getPort() + "}\n");
                SandboxNode node = new SandboxNode(0, "sandbox-n1", "ns", dir, dir, "cg", "10.0.0.1", null);
                SandboxFlows.Listener at = SandboxFlows.Listener.of(node);
                List<String> json = SandboxFlows.fetch(at, "json");
                assertThat(json).singleElement().satisfies(l -> assertThat(JsonParser.parseString(l).getAsJsonObject().get("node").getAsString())
                        .isEqualTo("sandbox-n1"));
                assertThat(SandboxFlows.fetch(at, "text")).singleElement().asString().contains("x/a(10.1.0.1) -> y/b(10.2.0.2):80");
                http.close();
                assertThatThrownBy(() -> SandboxFlows.fetch(at, "json")).isInstanceOf(IOException.class).hasMessageContaining("node sandbox-n1");
            }
        }
    }

    @Test
    void everyNodesLinesGoTogetherLatestFirstUnchanged() {
        String a1 = "{\"last\":\"2026-12-07T00:40:01Z\",\"node\":\"a\"}";
        String a2 = "{\"last\":\"2026-12-07T00:40:05Z\",\"node\":\"a\"}";
        String b1 = "{\"last\":\"2026-12-07T00:40:03Z\",\"node\":\"b\"}";
        assertThat(SandboxFlows.mergeJson(List.of(List.of(a2, a1), List.of(b1)))).containsExactly(a2, b1, a1);
    }
}
