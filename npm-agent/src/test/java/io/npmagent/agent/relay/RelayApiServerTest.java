package io.npmagent.agent.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.util.Watch;
import io.kubernetes.client.util.Watchable;
import com.sun.net.httpserver.HttpServer;
import io.npmagent.agent.cluster.TestCluster;
import io.npmagent.agent.source.k8s.KubeClients;
import io.npmagent.agent.source.k8s.PodWatchList;
import io.npmagent.agent.source.k8s.KubeObjects;
import io.npmagent.dataplane.model.FieldErrors;
import io.npmagent.dataplane.model.ObjectRef;
import io.npmagent.harness.controlplane.AgentIdentity;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The relay between a real kube-apiserver and the agent's own reader of pods ({@link PodWatchList}): the
 * agent's WatchList through the relay holds what it holds from the API server, and the watch after it
 * gives the same changes; callers the API server does not vouch for as the agent get 401, and a relay
 * that has not yet read the API server answers 429 rather than an empty cluster.
 */
class RelayApiServerTest {
    @TempDir
    Path tmp;

    private static io.fabric8.kubernetes.api.model.Pod pod(String name, String app, String ip) {
        return new PodBuilder().withNewMetadata().withName(name).withNamespace("shop").addToLabels("app", app)
                .addToAnnotations("kubernetes.io/egress-bandwidth", "10M").addToAnnotations("noise", "x".repeat(500)).endMetadata()
                .withNewSpec().withNodeName("node-1").addNewContainer().withName("c").withImage("nginx").addNewPort().withName("http")
                .withContainerPort(8080).endPort().endContainer().endSpec()
                .withNewStatus().withPhase("Running").withPodIP(ip).addNewPodIP(ip).endStatus().build();
    }

    @Test
    void theAgentReadsThroughTheRelayWhatItReadsFromTheApiServer() throws Exception {
        try (TestCluster cluster = TestCluster.start(tmp.resolve("cluster"))) {
            cluster.create(new NamespaceBuilder().withNewMetadata().withName("shop").endMetadata().build());
            cluster.create(pod("a", "web", "10.0.0.1"), pod("b", "db", "10.0.0.2"));
            PodFeed feed = new PodFeed(1000, 1000);
            ApiClient relayOwn = cluster.controlPlane().admin();
            Callers callers = new Callers(relayOwn, Set.of("system:serviceaccount:" + AgentIdentity.NAMESPACE + ":" + AgentIdentity.ACCOUNT));
            try (RelayServer relay = new RelayServer(HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0), feed, callers)) {
                ApiClient agentViaRelay = cluster.agentClient().setBasePath("http://127.0.0.1:" + relay.port());
                PodWatchList viaRelay = new PodWatchList(agentViaRelay, p -> p);
                assertThatThrownBy(() -> viaRelay.list("0")).as("nothing read yet: not an empty cluster")
                        .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.getCode()).isEqualTo(429));

                PodUpstream upstream = new PodUpstream(KubeClients.forWatches(cluster.controlPlane().admin()), feed);
                Thread reader = new Thread(upstream, "relay-upstream");
                reader.setDaemon(true);
                reader.start();
                try {
                    while (!feed.listed()) {
                        Thread.sleep(50);
                    }
                    PodWatchList direct = new PodWatchList(cluster.agentClient(), p -> p);
                    var list = viaRelay.list("0");
                    assertThat(models(list.getItems())).isEqualTo(models(direct.list("").getItems())).hasSize(2);

                    cluster.create(pod("c", "web", "10.0.0.3"));
                    cluster.admin().pods().inNamespace("shop").withName("a").edit(p -> {
                        p.getMetadata().getLabels().put("app", "db");
                        return p;
                    });
                    cluster.admin().pods().inNamespace("shop").withName("b").withGracePeriod(0).delete();
                    List<String> relayed = changes(viaRelay, list.getMetadata().getResourceVersion());
                    assertThat(relayed).as("the same changes, in order, as the API server's own watch")
                            .isEqualTo(changes(direct, list.getMetadata().getResourceVersion()));
                    assertThat(relayed).anyMatch(e -> e.startsWith("DELETED shop/b"));
                    assertThat(models(viaRelay.list("0").getItems())).as("a later WatchList").isEqualTo(models(direct.list("").getItems()));

                    ApiClient admin = cluster.controlPlane().admin().setBasePath("http://127.0.0.1:" + relay.port());
                    assertThatThrownBy(() -> new PodWatchList(admin, p -> p).list("0")).as("a token, but not the agent's")
                            .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.getCode()).isEqualTo(401));
                } finally {
                    upstream.stop();
                    reader.interrupt();
                }
            }
        }
    }

    /** The watch through {@code pods} from {@code from}, ended by its timeout: each change as "TYPE ns/name model". */
    private static List<String> changes(PodWatchList pods, String from) throws ApiException, java.io.IOException {
        List<String> out = new ArrayList<>();
        try (Watchable<V1Pod> w = pods.watch(from, 3)) {
            for (Watch.Response<V1Pod> e : w) {
                if (!"BOOKMARK".equals(e.type)) {
                    V1Pod p = e.object;
                    out.add(e.type + " " + p.getMetadata().getNamespace() + "/" + p.getMetadata().getName() + " " + p.getMetadata().getResourceVersion()
                            + " " + model(p));
                }
            }
        }
        return out;
    }

    private static Map<String, String> models(List<V1Pod> pods) {
        Map<String, String> out = new TreeMap<>();
        pods.forEach(p -> out.put(p.getMetadata().getNamespace() + "/" + p.getMetadata().getName() + " " + p.getMetadata().getResourceVersion(), model(p)));
        return out;
    }

    /** The model's pod, and the errors its reading found. */
    private static String model(V1Pod p) {
        FieldErrors errors = new FieldErrors(new ObjectRef("Pod", p.getMetadata().getNamespace(), p.getMetadata().getName()));
        return KubeObjects.pod(p, errors) + " " + errors.list();
    }
}
