package io.npmagent.pipelines.swarm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.npmagent.agent.source.k8s.PodWatchList;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The agent's requests as the audit log recorded them, turned into what a watcher replays. */
class AgentRequestsTest {
    private static final String AGENT = "system:serviceaccount:kube-system:npm-agent";

    private static String entry(String user, String stage, String verb, String uri) {
        return entry(user, stage, verb, uri, "2026-12-07T06:23:22.250597Z");
    }

    private static String entry(String user, String stage, String verb, String uri, String at) {
        return "{\"kind\":\"Event\",\"requestReceivedTimestamp\":\"" + at + "\",\"stage\":\"" + stage + "\",\"requestURI\":\"" + uri.replace("&", "\\u0026") + "\",\"verb\":\"" + verb
                + "\",\"user\":{\"username\":\"" + user + "\"},\"userAgent\":\"Kubernetes Java Client/27.0.0\"}";
    }

    private static final String WATCH_LIST = "allowWatchBookmarks=true&resourceVersion=0&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true";

    @Test
    void listsAndWatchesPerCollectionWithTheServersAnswersAsPlaceholders(@TempDir Path dir) throws IOException {
        Path log = dir.resolve("audit.log");
        Files.write(log, List.of(
                entry(AGENT, "ResponseStarted", "watch", "/api/v1/pods?" + WATCH_LIST),
                entry(AGENT, "ResponseComplete", "watch", "/api/v1/pods?" + WATCH_LIST),
                entry(AGENT, "ResponseComplete", "list", "/api/v1/namespaces?limit=500&resourceVersion=1&resourceVersionMatch=NotOlderThan"),
                entry(AGENT, "ResponseComplete", "list", "/api/v1/namespaces?continue=eyJ2IjoibWV0YSJ9&limit=500"),
                entry(AGENT, "ResponseComplete", "get", "/apis/policy.networking.k8s.io/v1beta1", "2026-12-07T06:00:00Z"),
                entry(AGENT, "ResponseComplete", "get", "/version", "2026-12-07T06:00:01Z"),
                entry("system:kube-controller-manager", "ResponseComplete", "list", "/api/v1/nodes?limit=500"),
                entry(AGENT, "ResponseStarted", "watch", "/api/v1/pods?resourceVersion=261&timeoutSeconds=446&watch=true"),
                entry(AGENT, "ResponseComplete", "watch", "/api/v1/pods?resourceVersion=261&timeoutSeconds=446&watch=true"),
                entry(AGENT, "ResponseStarted", "watch", "/api/v1/namespaces?resourceVersion=300&timeoutSeconds=301&watch=true"),
                entry(AGENT, "ResponseComplete", "create", "/api/v1/namespaces/default/events"),
                entry(AGENT, "ResponseComplete", "get", "/apis/policy.networking.k8s.io/v1beta1", "2026-12-07T06:00:30Z"),
                entry(AGENT, "ResponseComplete", "get", "/apis/policy.networking.k8s.io/v1beta1", "2026-12-07T06:01:01Z")));

        AgentRequests r = AgentRequests.fromAuditLog(log, AGENT);

        assertThat(r.userAgent()).isEqualTo("Kubernetes Java Client/27.0.0");
        assertThat(r.informers()).containsExactly(
                new AgentRequests.Informer("/api/v1/pods", WATCH_LIST, null, "resourceVersion={rv}&timeoutSeconds={timeout}&watch=true",
                        PodWatchList.ACCEPT),
                new AgentRequests.Informer("/api/v1/namespaces", "limit=500&resourceVersion=1&resourceVersionMatch=NotOlderThan",
                        "continue={continue}&limit=500", "resourceVersion={rv}&timeoutSeconds={timeout}&watch=true", "application/json"));
        assertThat(r.informers()).extracting(AgentRequests.Informer::watchList).as("pods are read as a WatchList").containsExactly(true, false);
        assertThat(r.gets()).as("discovery repeated: its period is the median gap; a GET made once is made once")
                .containsExactly(new AgentRequests.Poll("/apis/policy.networking.k8s.io/v1beta1", java.time.Duration.ofSeconds(31)),
                        new AgentRequests.Poll("/version", null));
    }

    @Test
    void aLogWithoutTheAgentsWatchesIsAnError(@TempDir Path dir) throws IOException {
        Path log = dir.resolve("audit.log");
        Files.write(log, List.of(entry("someone-else", "ResponseStarted", "watch", "/api/v1/pods?resourceVersion=1&watch=true")));
        assertThatThrownBy(() -> AgentRequests.fromAuditLog(log, AGENT)).hasMessageContaining("no list and watch of " + AGENT);
    }
}
