package io.npmagent.agent.source.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A refusal for load is not a server without WatchLists: kube-apiserver's priority and fairness refuses in
 * plain text (429), and the list is then asked again as a WatchList. Only a server that answers, and not
 * in protobuf, makes the agent list in JSON pages. A server that refuses on cue is a fault a real one gives
 * only under load (the swarm pipeline's starts), so this one is the JDK's HTTP server.
 */
class PodWatchListRefusalTest {
    @Test
    void aRefusalInPlainTextIsAskedAgainAndOnlyAJsonAnswerTurnsToPages() throws Exception {
        List<String> asked = new ArrayList<>();
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/api/v1/pods", exchange -> {
            asked.add(exchange.getRequestURI().getQuery());
            boolean first = asked.size() == 1;
            byte[] body = (first ? "Too many requests, please try again later.\n" : "{\"kind\":\"PodList\",\"items\":[]}").getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", first ? "text/plain; charset=utf-8" : "application/json");
            if (first) {
                exchange.getResponseHeaders().set("Retry-After", "1");
            }
            exchange.sendResponseHeaders(first ? 429 : 200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        try {
            ApiClient client = new ApiClient().setBasePath("http://127.0.0.1:" + server.getAddress().getPort());
            PodWatchList list = new PodWatchList(client, p -> p);

            assertThatThrownBy(() -> list.list("0")).isInstanceOfSatisfying(ApiException.class, e -> {
                assertThat(e.getCode()).isEqualTo(429);
                assertThat(e.getResponseHeaders()).containsKey("retry-after");
            });
            assertThat(list.list("0")).as("asked again as a WatchList; a JSON answer means no WatchList here").isNull();
            assertThat(list.list("0")).as("and pages from then on, without asking").isNull();
            assertThat(asked).hasSize(2).allMatch(q -> q.contains("sendInitialEvents=true") && q.contains("watch=true"));
        } finally {
            server.stop(0);
        }
    }
}
