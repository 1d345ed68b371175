package io.npmagent.agent.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.npmagent.agent.backend.Backends;
import io.npmagent.agent.cli.CliRun;
import io.npmagent.agent.cli.ExitCodes;
import io.npmagent.agent.flows.FlowFixtures;
import io.npmagent.agent.run.Agent;
import io.npmagent.dataplane.backend.FakeBackend;
import io.npmagent.dataplane.batch.QueueConfig;
import io.npmagent.dataplane.flow.ReplayedFlows;
import io.npmagent.dataplane.metrics.Metrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** /debug/flows of an agent on the fake backend, whose kernel reports are handed in, and npm-agent flows against it. */
class FlowsHttpTest {
    private final HttpClient client = HttpClient.newHttpClient();
    private final FakeBackend backend = new FakeBackend();
    private ReplayedFlows kernel;
    private Agent agent;
    private AgentHttp http;

    @BeforeEach
    void start() throws Exception {
        PrometheusRegistry registry = new PrometheusRegistry();
        agent = new Agent(new Backends.Chosen(backend, "fake"), "n1", QueueConfig.DEFAULTS, registry, new Metrics(registry), Duration.ofMinutes(1));
        agent.start(FlowFixtures.cluster());
        kernel = backend.flows();
        http = AgentHttp.start(new InetSocketAddress("127.0.0.1", 0), new InetSocketAddress("127.0.0.1", 0), agent, () -> null, Map::of);
    }

    @AfterEach
    void stop() {
        http.close();
        agent.close();
    }

    private HttpResponse<String> get(String pathAndQuery) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http.debugAddress().getPort() + pathAndQuery)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private String address() {
        return "127.0.0.1:" + http.debugAddress().getPort();
    }

    @Test
    void textListsEachFlowOnALineWithItsPolicyAndNearestRule() throws Exception {
        kernel.report(FlowFixtures.deniedIngress(kernel.refs(), 3, 1));
        HttpResponse<String> text = get("/debug/flows");
        assertThat(text.statusCode()).isEqualTo(200);
        assertThat(text.body().lines().toList()).singleElement().asString()
                .contains("DENIED(policy) ingress TCP x/a(10.1.0.1) -> y/b(10.2.0.2):80 packets=3")
                .contains("NetworkPolicy y/allow-web isolates it for ingress")
                .contains("nearest: y/allow-web spec.ingress[0] admits the peer but not TCP/80 (its ports: TCP/8080)");
        assertThat(client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http.mainAddress().getPort() + "/debug/flows")).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode()).as("addresses stay off the metrics listener").isEqualTo(404);
    }

    @Test
    void jsonHasEveryFieldOfTheSchema() throws Exception {
        kernel.report(FlowFixtures.deniedIngress(kernel.refs(), 3, 1));
        HttpResponse<String> json = get("/debug/flows?output=json");
        assertThat(json.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("application/x-ndjson"));
        JsonObject f = JsonParser.parseString(json.body().strip()).getAsJsonObject();
        assertThat(f.keySet()).containsExactly("first", "last", "node", "backend", "verdict", "reason", "direction", "reporter", "family",
                "protocol", "source", "destination", "port", "service", "packets", "bytes", "reports", "attribution", "nearest");
        assertThat(f.get("node").getAsString()).isEqualTo("n1");
        assertThat(f.get("verdict").getAsString()).isEqualTo("denied");
        assertThat(f.get("reason").getAsString()).isEqualTo("policy");
        assertThat(f.get("direction").getAsString()).isEqualTo("ingress");
        assertThat(f.get("first").getAsString()).isEqualTo("2026-12-07T00:40:00Z");
        assertThat(f.getAsJsonObject("source").get("pod").getAsString()).isEqualTo("x/a");
        assertThat(f.getAsJsonObject("destination").get("address").getAsString()).isEqualTo("10.2.0.2");
        assertThat(f.get("port").getAsInt()).isEqualTo(80);
        assertThat(f.get("service").isJsonNull()).isTrue();
        assertThat(f.get("packets").getAsLong()).isEqualTo(3);
        JsonObject a = f.getAsJsonObject("attribution");
        assertThat(a.get("kind").getAsString()).isEqualTo("NetworkPolicy");
        assertThat(a.get("tier").getAsString()).isEqualTo("NetworkPolicy");
        assertThat(a.getAsJsonArray("policies").get(0).getAsJsonObject().toString())
                .isEqualTo("{\"namespace\":\"y\",\"name\":\"allow-web\",\"rule\":\"isolation\"}");
        assertThat(a.get("text").getAsString()).contains("isolates");
        assertThat(f.get("nearest").getAsString()).contains("spec.ingress[0]");
    }

    @Test
    void filtersKeepWhatTheyName() throws Exception {
        agent.close();
        http.close();
        PrometheusRegistry registry = new PrometheusRegistry();
        FakeBackend both = new FakeBackend();
        agent = new Agent(new Backends.Chosen(both, "fake"), "n1", QueueConfig.DEFAULTS, registry, new Metrics(registry), Duration.ofMinutes(1),
                new io.npmagent.agent.config.FlowConfig(true, true, 1000, 5, 15, 100, false));
        agent.start(FlowFixtures.cluster());
        kernel = both.flows();
        http = AgentHttp.start(new InetSocketAddress("127.0.0.1", 0), new InetSocketAddress("127.0.0.1", 0), agent, () -> null, Map::of);
        kernel.report(FlowFixtures.deniedIngress(kernel.refs(), 3, 1));
        kernel.report(FlowFixtures.allowedEgress(kernel.refs(), 2));

        assertThat(get("/debug/flows").body().lines()).hasSize(2);
        assertThat(get("/debug/flows?verdict=allowed").body()).contains("ALLOWED").doesNotContain("DENIED");
        assertThat(get("/debug/flows?pod=x%2Fa").body().lines()).singleElement().asString().contains("DENIED");
        assertThat(get("/debug/flows?namespace=y").body().lines()).hasSize(2);
        assertThat(get("/debug/flows?namespace=x").body().lines()).hasSize(1);
        assertThat(get("/debug/flows?policy=y%2Fallow-web").body().lines()).singleElement().asString().contains("DENIED");
        assertThat(get("/debug/flows?policy=allow-web").body().lines()).hasSize(1);
        assertThat(get("/debug/flows?since=2026-12-07T00:40:02Z").body().lines()).singleElement().asString().contains("ALLOWED");
        assertThat(get("/debug/flows?since=1m").body()).as("the fixtures' packets are long past").isEmpty();

        // The CLI prints what the agent serves.
        CliRun run = CliRun.of("flows", "--address", address(), "--verdict", "denied", "--output", "json");
        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCodes.OK);
        assertThat(run.out().lines().toList()).singleElement().satisfies(l -> assertThat(JsonParser.parseString(l).getAsJsonObject()
                .get("verdict").getAsString()).isEqualTo("denied"));
        CliRun text = CliRun.of("flows", "--address", address(), "--namespace", "y");
        assertThat(text.out().lines()).hasSize(2);
    }

    @Test
    void aBadParameterIsRefusedNamingIt() throws Exception {
        for (Map.Entry<String, String> bad : Map.of("verdict=dropped", "verdict", "pod=nopod", "pod", "since=yesterday", "since",
                "output=yaml", "output", "follow=maybe", "follow", "namespace=", "namespace", "colour=blue", "colour").entrySet()) {
            HttpResponse<String> r = get("/debug/flows?" + bad.getKey());
            assertThat(r.statusCode()).as(bad.getKey()).isEqualTo(400);
            assertThat(r.body()).as(bad.getKey()).contains(bad.getValue() + "");
        }
        CliRun run = CliRun.of("flows", "--address", address(), "--since", "yesterday");
        assertThat(run.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err()).contains("--since: ").contains("\"yesterday\"");
        assertThat(CliRun.of("flows", "--address", "localhost").exitCode()).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void theCliSaysWhenTheAgentCannotBeReached() throws Exception {
        int port = http.debugAddress().getPort();
        http.close();
        CliRun run = CliRun.of("flows", "--address", "127.0.0.1:" + port);
        assertThat(run.exitCode()).isEqualTo(ExitCodes.FAILED);
        assertThat(run.err()).contains("cannot reach the agent's debug listener at 127.0.0.1:" + port);
        http = AgentHttp.start(new InetSocketAddress("127.0.0.1", 0), new InetSocketAddress("127.0.0.1", 0), agent, () -> null, Map::of);
    }

    @Test
    void followStreamsTheFlowsThenEachUpdateUntilTheClientGoes() throws Exception {
        kernel.report(FlowFixtures.deniedIngress(kernel.refs(), 1, 1));
        HttpResponse<InputStream> r = client.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + http.debugAddress().getPort() + "/debug/flows?follow&output=json")).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertThat(r.statusCode()).isEqualTo(200);
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
            assertThat(packets(nextLine(lines))).as("the flow held").isEqualTo(1);
            kernel.report(FlowFixtures.deniedIngress(kernel.refs(), 7, 2));
            assertThat(packets(nextLine(lines))).as("its update").isEqualTo(7);
        }
        // The client went: the follower is dropped within a keep-alive, and its thread is free again.
        Thread.sleep(FlowsEndpoint.KEEPALIVE.toMillis() + 1500);
        kernel.report(FlowFixtures.deniedIngress(kernel.refs(), 9, 3));
        assertThat(get("/debug/flows").statusCode()).isEqualTo(200);

        // The CLI follows until the agent ends the stream.
        CompletableFuture<CliRun> following = CompletableFuture.supplyAsync(() -> CliRun.of("flows", "--address", address(), "--follow"));
        Thread.sleep(1000);
        kernel.report(FlowFixtures.deniedIngress(kernel.refs(), 11, 4));
        Thread.sleep(500);
        http.close();
        CliRun run = following.get(20, TimeUnit.SECONDS);
        assertThat(run.out()).contains("packets=9").contains("packets=11");
        assertThat(run.out().lines()).as("keep-alives are not printed").noneMatch(String::isEmpty);
        http = AgentHttp.start(new InetSocketAddress("127.0.0.1", 0), new InetSocketAddress("127.0.0.1", 0), agent, () -> null, Map::of);
    }

    private static String nextLine(BufferedReader lines) throws Exception {
        String line;
        do {
            line = lines.readLine();
        } while (line != null && line.isEmpty());
        assertThat(line).isNotNull();
        return line;
    }

    private static long packets(String jsonLine) {
        return JsonParser.parseString(jsonLine).getAsJsonObject().get("packets").getAsLong();
    }

}
