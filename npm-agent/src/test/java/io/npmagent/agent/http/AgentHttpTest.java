package io.npmagent.agent.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.agent.backend.Backends;
import io.npmagent.agent.run.Agent;
import io.npmagent.agent.run.AgentStatus;
import io.npmagent.dataplane.backend.FakeBackend;
import io.npmagent.dataplane.batch.QueueConfig;
import io.npmagent.dataplane.metrics.Metrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class AgentHttpTest {
    private final AtomicReference<AgentStatus> status = new AtomicReference<>();
    private final HttpClient client = HttpClient.newHttpClient();
    private Agent agent;
    private AgentHttp http;

    @BeforeEach
    void start() throws Exception {
        PrometheusRegistry registry = new PrometheusRegistry();
        agent = new Agent(new Backends.Chosen(new FakeBackend(), "fake"), null, QueueConfig.DEFAULTS, registry, new Metrics(registry),
                Duration.ofMinutes(1));
        http = AgentHttp.start(new InetSocketAddress("127.0.0.1", 0), new InetSocketAddress("127.0.0.1", 0), agent, status::get, () -> Map.of("pods", 3));
    }

    @AfterEach
    void stop() {
        http.close();
        agent.close();
    }

    private HttpResponse<String> get(InetSocketAddress at, String path, String accept) throws Exception {
        HttpRequest.Builder r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + at.getPort() + path));
        if (accept != null) {
            r.header("Accept", accept);
        }
        return client.send(r.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static AgentStatus status(long applied, List<String> failures) {
        return status(1, applied, failures);
    }

    private static AgentStatus status(long seen, long applied, List<String> failures) {
        return new AgentStatus("fake", "fake", "h1", seen, applied == 0 ? "" : "h1", applied, "", 3, failures, List.of(), List.of(), "now");
    }

    @Test
    void healthAndReadiness() throws Exception {
        assertThat(get(http.mainAddress(), "/healthz", null).statusCode()).isEqualTo(200);
        HttpResponse<String> unsynced = get(http.mainAddress(), "/readyz", null);
        assertThat(unsynced.statusCode()).isEqualTo(503);
        assertThat(unsynced.body()).contains("caches not synced");

        status.set(status(1, 0, List.of()));
        HttpResponse<String> notYet = get(http.mainAddress(), "/readyz", null);
        assertThat(notYet.statusCode()).isEqualTo(503);
        assertThat(notYet.body()).contains("first state is not in the kernel");

        status.set(status(1, List.of()));
        assertThat(get(http.mainAddress(), "/readyz", null).statusCode()).isEqualTo(200);

        status.set(status(1, List.of("NetworkPolicy x/p: refused")));
        HttpResponse<String> refused = get(http.mainAddress(), "/readyz", null);
        assertThat(refused.statusCode()).isEqualTo(503);
        assertThat(refused.body()).contains("refuses 1 parts");

        // A grant the API server refuses: not ready, whatever else holds, and the message says which.
        status.set(new AgentStatus("fake", "fake", "h1", 1, "h1", 1, "", 3, List.of(), List.of(),
                List.of("the API server forbids watch pods: pods is forbidden: User \"system:serviceaccount:kube-system:npm-agent\" cannot watch"), "now"));
        HttpResponse<String> denied = get(http.mainAddress(), "/readyz", null);
        assertThat(denied.statusCode()).isEqualTo(503);
        assertThat(denied.body()).contains("forbids watch pods").contains("system:serviceaccount:kube-system:npm-agent");
    }

    @Test
    void metricsInPrometheusTextOrOpenMetrics() throws Exception {
        HttpResponse<String> text = get(http.mainAddress(), "/metrics", null);
        assertThat(text.statusCode()).isEqualTo(200);
        assertThat(text.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("text/plain; version=0.0.4"));
        assertThat(text.body()).contains("npm_pending_netpols");

        HttpResponse<String> open = get(http.mainAddress(), "/metrics", "application/openmetrics-text; version=1.0.0");
        assertThat(open.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("application/openmetrics-text"));
        assertThat(open.body()).contains("npm_pending_netpols").endsWith("# EOF\n");
    }

    @Test
    void debugStateIsOnItsOwnListenerOnly() throws Exception {
        status.set(status(1, List.of()));
        HttpResponse<String> state = get(http.debugAddress(), "/debug/state", null);
        assertThat(state.statusCode()).isEqualTo(200);
        assertThat(state.body()).contains("\"pendingPolicies\": 0").contains("\"appliedGeneration\": 1")
                .contains("\"pods\": 3");
        assertThat(get(http.mainAddress(), "/debug/state", null).statusCode()).isEqualTo(404);
        assertThat(get(http.debugAddress(), "/metrics", null).statusCode()).isEqualTo(404);
        assertThat(get(http.mainAddress(), "/metricsx", null).statusCode()).isEqualTo(404);
    }

    @Test
    void onlyGet() throws Exception {
        HttpResponse<String> post = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http.mainAddress().getPort() + "/healthz"))
                .POST(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(post.statusCode()).isEqualTo(405);
    }
}
