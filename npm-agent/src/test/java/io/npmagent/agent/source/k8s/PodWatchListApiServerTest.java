package io.npmagent.agent.source.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import io.kubernetes.client.util.Watch;
import io.kubernetes.client.util.Watchable;
import com.google.gson.reflect.TypeToken;
import io.npmagent.agent.cluster.TestCluster;
import io.npmagent.dataplane.model.FieldErrors;
import io.npmagent.dataplane.model.ObjectRef;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's pods listed in protobuf are, to the model, the pods JSON lists: against a real kube-apiserver,
 * pods of every shape the model reads (labels, bandwidth annotations, named and unnamed ports, sidecars,
 * host network, dual-stack addresses, no address, a terminal phase), as a WatchList at any version, at a
 * version and at the latest. A refusal comes back as the server's Status, read from protobuf. The watch
 * that follows gives the same events in protobuf as in JSON (its 410 Gone: {@code KubeLoopApiServerTest}'s
 * outage, {@code PodWatchBreakTest}).
 */
class PodWatchListApiServerTest {
    @TempDir
    Path tmp;

    private static final String WEB = """
            {"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"shop","labels":{"app":"web","tier":"front"},
             "annotations":{"kubernetes.io/egress-bandwidth":"10M","kubernetes.io/ingress-bandwidth":"20M","prometheus.io/scrape":"true"}},
             "spec":{"nodeName":"node-1",
              "initContainers":[{"name":"init","image":"busybox"},
                {"name":"proxy","image":"envoy","restartPolicy":"Always","ports":[{"name":"admin","containerPort":9901}]}],
              "containers":[{"name":"web","image":"nginx","ports":[{"name":"http","containerPort":8080,"protocol":"TCP"},
                {"name":"dns","containerPort":53,"protocol":"UDP"},{"containerPort":9000}]}]},
             "status":{"phase":"Running","podIP":"10.1.2.3","podIPs":[{"ip":"10.1.2.3"},{"ip":"fd00::3"}]}}
            """;
    private static final String HOST = """
            {"apiVersion":"v1","kind":"Pod","metadata":{"name":"host","namespace":"shop"},
             "spec":{"nodeName":"node-1","hostNetwork":true,"containers":[{"name":"agent","image":"a","ports":[{"containerPort":9100,"hostPort":9100}]}]},
             "status":{"phase":"Running","podIP":"192.168.0.1","podIPs":[{"ip":"192.168.0.1"}]}}
            """;
    private static final String PENDING = """
            {"apiVersion":"v1","kind":"Pod","metadata":{"name":"pending","namespace":"shop","labels":{"app":"web","tier":"front"}},
             "spec":{"containers":[{"name":"web","image":"nginx"}]},"status":{"phase":"Pending"}}
            """;
    private static final String DONE = """
            {"apiVersion":"v1","kind":"Pod","metadata":{"name":"done","namespace":"jobs","labels":{"job":"x"}},
             "spec":{"nodeName":"node-2","restartPolicy":"Never","containers":[{"name":"job","image":"busybox"}]},
             "status":{"phase":"Succeeded","podIP":"10.1.2.9","podIPs":[{"ip":"10.1.2.9"}]}}
            """;

    @Test
    void aProtobufWatchListGivesTheModelTheSamePodsAsJson() throws Exception {
        try (TestCluster cluster = TestCluster.start(tmp.resolve("cluster"))) {
            cluster.create(new NamespaceBuilder().withNewMetadata().withName("shop").endMetadata().build(),
                    new NamespaceBuilder().withNewMetadata().withName("jobs").endMetadata().build());
            for (String json : List.of(WEB, HOST, PENDING, DONE)) {
                cluster.create(Serialization.unmarshal(json, Pod.class));
            }
            ApiClient client = cluster.agentClient();
            List<String> slimmed = new ArrayList<>();
            PodWatchList proto = new PodWatchList(client, p -> {
                slimmed.add(p.getMetadata().getName());
                return p;
            });

            V1PodList any = proto.list("0");
            assertThat(any.getMetadata().getResourceVersion()).isNotBlank();
            assertThat(any.getMetadata().getContinue()).as("one request, no pages").isNull();
            assertThat(slimmed).as("each pod slimmed as it was read").hasSameSizeAs(any.getItems());
            assertThat(byName(proto.list(any.getMetadata().getResourceVersion()).getItems()).keySet()).as("not older than the list's version")
                    .isEqualTo(byName(any.getItems()).keySet());
            assertThat(byName(proto.list("").getItems()).keySet()).as("the latest").isEqualTo(byName(any.getItems()).keySet());

            Map<String, V1Pod> viaProto = byName(any.getItems());
            Map<String, V1Pod> viaJson = byName(new CoreV1Api(client).listPodForAllNamespaces().execute().getItems());
            assertThat(viaProto.keySet()).containsAll(List.of("shop/web", "shop/host", "shop/pending", "jobs/done")).isEqualTo(viaJson.keySet());
            viaJson.forEach((key, json) -> {
                V1Pod fromProto = viaProto.get(key);
                ObjectRef ref = new ObjectRef("Pod", json.getMetadata().getNamespace(), json.getMetadata().getName());
                FieldErrors protoErrors = new FieldErrors(ref);
                FieldErrors jsonErrors = new FieldErrors(ref);
                assertThat(KubeObjects.pod(SlimObjects.pod(fromProto), protoErrors)).as(key).isEqualTo(KubeObjects.pod(SlimObjects.pod(json), jsonErrors));
                assertThat(protoErrors.list()).as(key).isEqualTo(jsonErrors.list());
                assertThat(SlimObjects.pod(fromProto)).as(key + ": name, version and model").isEqualTo(SlimObjects.pod(json));
            });
            var web = KubeObjects.pod(SlimObjects.pod(viaProto.get("shop/web")), new FieldErrors(new ObjectRef("Pod", "shop", "web")));
            assertThat(web.ips()).hasSize(2);
            assertThat(web.ports()).hasSize(4);
            assertThat(web.annotations()).hasSize(2);

            assertThatThrownBy(() -> proto.list("not-a-version")).isInstanceOfSatisfying(ApiException.class,
                    e -> {
                        assertThat(e.getCode()).as("the server's Status, read from protobuf: " + e.getMessage()).isEqualTo(500);
                        assertThat(e.getResponseBody()).contains("resourceVersion: Invalid value: \"not-a-version\"");
                    });
        }
    }

    @Test
    void aProtobufWatchGivesTheSameEventsAsJson() throws Exception {
        try (TestCluster cluster = TestCluster.start(tmp.resolve("cluster"))) {
            cluster.create(new NamespaceBuilder().withNewMetadata().withName("shop").endMetadata().build());
            ApiClient client = cluster.agentClient();
            PodWatchList proto = new PodWatchList(client, p -> p);
            String from = proto.list("").getMetadata().getResourceVersion();
            cluster.create(Serialization.unmarshal(WEB, Pod.class), Serialization.unmarshal(PENDING, Pod.class));
            cluster.admin().pods().inNamespace("shop").withName("pending").edit(p -> {
                p.getMetadata().getLabels().put("tier", "back");
                return p;
            });
            cluster.admin().pods().inNamespace("shop").withName("web").withGracePeriod(0).delete();

            // Both watches end on their timeout, after the server has replayed every event since the version.
            List<String> viaProto = new ArrayList<>();
            try (Watchable<V1Pod> w = proto.watch(from, 3)) {
                w.forEach(e -> viaProto.add(event(e)));
            }
            List<String> viaJson = new ArrayList<>();
            try (Watch<V1Pod> w = Watch.createWatch(client, new CoreV1Api(client).listPodForAllNamespaces().resourceVersion(from).timeoutSeconds(3)
                    .watch(true).buildCall(null), new TypeToken<Watch.Response<V1Pod>>() {}.getType())) {
                w.forEach(e -> viaJson.add(event(e)));
            }
            assertThat(viaProto.stream().filter(e -> !e.startsWith("BOOKMARK"))).as("bookmarks are asked for in protobuf alone")
                    .containsExactlyElementsOf(viaJson);
            assertThat(viaJson).extracting(e -> e.substring(0, e.indexOf(' '))).as(viaJson.toString())
                    .contains("ADDED", "MODIFIED").endsWith("DELETED");

        }
    }

    /** An event as the model sees it: its type, the pod's name and version, and the model's pod. */
    private static String event(Watch.Response<V1Pod> e) {
        V1Pod pod = SlimObjects.pod(e.object);
        ObjectRef ref = new ObjectRef("Pod", pod.getMetadata().getNamespace(), pod.getMetadata().getName());
        return e.type + " " + ref + " " + pod.getMetadata().getResourceVersion()
                + ("BOOKMARK".equals(e.type) ? "" : " " + KubeObjects.pod(pod, new FieldErrors(ref)));
    }

    private static Map<String, V1Pod> byName(List<V1Pod> pods) {
        Map<String, V1Pod> out = new TreeMap<>();
        pods.forEach(p -> out.put(p.getMetadata().getNamespace() + "/" + p.getMetadata().getName(), p));
        return out;
    }
}
