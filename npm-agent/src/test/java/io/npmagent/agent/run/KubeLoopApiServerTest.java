package io.npmagent.agent.run;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.npmagent.harness.controlplane.ControlPlane;
import io.npmagent.harness.controlplane.NetworkPolicyApi;
import io.npmagent.harness.process.Await;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1NetworkPolicy;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1Pod;
import io.npmagent.agent.backend.Backends;
import io.npmagent.agent.source.k8s.ClusterPolicyJson;
import io.npmagent.agent.source.k8s.KubeObjects;
import io.npmagent.agent.source.k8s.KubeSource;
import io.npmagent.agent.source.k8s.ServerDigest;
import io.npmagent.agent.cluster.TestCluster;
import io.npmagent.dataplane.backend.FakeBackend;
import io.npmagent.dataplane.batch.QueueConfig;
import io.npmagent.dataplane.desired.CanonicalState;
import io.npmagent.dataplane.desired.DesiredState;
import io.npmagent.dataplane.desired.DesiredStateInterpreter;
import io.npmagent.dataplane.eval.Endpoint;
import io.npmagent.dataplane.eval.ReferenceEvaluator;
import io.npmagent.dataplane.eval.Verdict;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.FieldErrors;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.ObjectRef;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's Kubernetes path end to end against a real kube-apiserver (upstream's, with etcd, RBAC
 * and the controller manager; {@link TestCluster}), the agent on its ServiceAccount's token: informers,
 * {@link KubeLoop}, compiler, queue, and a recording {@link FakeBackend} in place of the kernel. After
 * every change the backend must hold what a compile from scratch of the server's objects gives, and
 * its verdicts must be the reference evaluator's; the status's digest must name the server's objects.
 */
class KubeLoopApiServerTest {
    private static final String NODE = "node-a";
    private static final int[] PORTS = {80, 81, 443};
    private static final JSON CLIENT_JSON = new JSON();
    /** Short, so that a CRD installed or removed is seen within the test's patience. */
    private static final Duration DISCOVERY = Duration.ofMillis(200);

    @TempDir
    Path tmp;
    private TestCluster cluster;
    private KubernetesClient kube;
    private FakeBackend backend;
    private Agent agent;
    private KubeLoop loop;
    private Thread thread;

    @BeforeEach
    void server() throws Exception {
        cluster = TestCluster.start(tmp.resolve("cluster"));
        kube = cluster.admin();
    }

    @AfterEach
    void stop() {
        if (loop != null) {
            loop.stop(Duration.ofSeconds(10));
        }
        cluster.close();
    }

    private void startAgent() throws Exception {
        startAgent(unit -> false);
    }

    /** With a backend that refuses the parts {@code reject} names, as a kernel would. */
    private void startAgent(java.util.function.Predicate<io.npmagent.dataplane.backend.Batch.UnitKey> reject) throws Exception {
        startAgent(reject, null);
    }

    private void startAgent(java.util.function.Predicate<io.npmagent.dataplane.backend.Batch.UnitKey> reject, KubeSource.PodRelay relay) throws Exception {
        backend = new FakeBackend().rejectWhen(reject);
        PrometheusRegistry registry = new PrometheusRegistry();
        agent = new Agent(new Backends.Chosen(backend, "fake"), NODE, new QueueConfig(true, true, 100, Duration.ofMillis(50)), registry,
                new Metrics(registry), Duration.ofMinutes(10));
        loop = new KubeLoop(new KubeSource(cluster.agentClient(), Duration.ofMinutes(10), DISCOVERY, relay), agent, null);
        thread = new Thread(() -> loop.run(Duration.ofMillis(20)), "kube-loop-test");
        thread.start();
    }

    @Test
    void theFirstBatchIsTheWholeClusterAndLaterChangesFollowIt() throws Exception {
        create(namespace("x", "team", "a"), namespace("y", "team", "b"));
        for (int i = 0; i < 20; i++) {
            create(pod("x", "p" + i, i % 2 == 0 ? NODE : "node-b", "10.0.0." + (i + 1), "app", i % 3 == 0 ? "db" : "web"));
            create(pod("y", "q" + i, i % 2 == 1 ? NODE : "node-b", "10.0.1." + (i + 1), "app", "client"));
        }
        create(policy("x", "db-from-web", "app", "db", "app", "web", null, 443), policy("x", "web-from-team-b", "app", "web", null, null, "b", 80));
        startAgent();
        awaitConverged();
        assertThat(backend.batches()).as("one batch before any change: nothing applied before the caches synced").hasSize(1);
        assertMatchesServer();

        // Updates: a pod leaves a selector, a policy changes its port, a namespace its labels.
        kube.pods().inNamespace("x").withName("p0").edit(p -> new PodBuilder(p).editMetadata().addToLabels("app", "web").endMetadata().build());
        kube.network().v1().networkPolicies().inNamespace("x").withName("db-from-web")
                .edit(p -> new NetworkPolicyBuilder(p).editSpec().editFirstIngress().editFirstPort().withPort(new io.fabric8.kubernetes.api.model.IntOrString(81)).endPort().endIngress()
                        .endSpec().build());
        kube.namespaces().withName("y").edit(n -> new NamespaceBuilder(n).editMetadata().addToLabels("team", "a").endMetadata().build());
        awaitConverged();
        assertMatchesServer();

        // Deletes, and a new pod whose address an old one had.
        kube.pods().inNamespace("x").withName("p2").withGracePeriod(0).delete();
        kube.network().v1().networkPolicies().inNamespace("x").withName("web-from-team-b").delete();
        create(pod("x", "p2-new", NODE, "10.0.0.3", "app", "db"));
        awaitConverged();
        assertMatchesServer();
        assertThat(agent.failures()).isEmpty();

    }

    @Test
    void anApiServerRestartAndAnExpiredVersionAreSurvivedByRelisting() throws Exception {
        create(namespace("x", "team", "a"));
        create(pod("x", "a", NODE, "10.0.0.1", "app", "db"), pod("x", "b", "node-b", "10.0.0.2", "app", "web"));
        create(policy("x", "db", "app", "db", "app", "web", null, 443));
        startAgent();
        awaitConverged();
        assertMatchesServer();

        // A restart: every watch drops, and the informers resume from the versions they had.
        cluster.controlPlane().restartApiServer();
        create(pod("x", "c", NODE, "10.0.0.3", "app", "web"));
        awaitConverged();
        assertMatchesServer();

        // An outage during which the cluster changes and etcd is compacted past the agent's versions:
        // the watches come back to a 410 Gone, and only a relist shows the changes.
        long listsBefore = agentLists("pods");
        cluster.controlPlane().outageWithWrites(kubeconfig -> {
            try (KubernetesClient other = new KubernetesClientBuilder().withConfig(Config.fromKubeconfig(Files.readString(kubeconfig))).build()) {
                other.network().v1().networkPolicies().inNamespace("x").withName("db").delete();
                other.resource(policy("x", "db2", "app", "db", "app", "web", null, 80)).create();
                other.pods().inNamespace("x").withName("c").withGracePeriod(0).delete();
                other.namespaces().withName("x").edit(n -> new NamespaceBuilder(n).editMetadata().addToLabels("team", "b").endMetadata().build());
            }
        });
        awaitConverged();
        assertMatchesServer();
        assertThat(backend.state().pods()).as("c's deletion came through the relist").hasSize(1);
        // The 410 comes as the answer to the relist at the old version, or inside the resumed watch's stream
        // (the audit log records that as 200): either way only a new list brings the changes.
        assertThat(agentLists("pods")).as("pods listed again after the outage").isGreaterThan(listsBefore);
    }

    /**
     * Through a pod relay: other nodes' pods from the relay, this node's own from the API server by node,
     * and the backend holds what a compile of the server's objects gives, as without it. The agent's own
     * pod requests to the API server all select its node; a pending pod scheduled to it passes from the
     * relay's word to the node's own watch.
     */
    @Test
    void throughAPodRelayTheAgentHoldsWhatTheServerHoldsAndAsksOnlyForItsOwnPods() throws Exception {
        create(namespace("x", "team", "a"));
        for (int i = 0; i < 10; i++) {
            create(pod("x", "p" + i, i % 2 == 0 ? NODE : "node-b", "10.0.0." + (i + 1), "app", i % 3 == 0 ? "db" : "web"));
        }
        create(policy("x", "db-from-web", "app", "db", "app", "web", null, 443));
        io.npmagent.agent.relay.PodFeed feed = new io.npmagent.agent.relay.PodFeed(1000, 1000);
        io.npmagent.agent.relay.PodUpstream upstream = new io.npmagent.agent.relay.PodUpstream(
                io.npmagent.agent.source.k8s.KubeClients.forWatches(cluster.controlPlane().admin()), feed);
        Thread reading = new Thread(upstream, "relay-upstream");
        reading.setDaemon(true);
        reading.start();
        try (io.npmagent.agent.relay.RelayServer relay = new io.npmagent.agent.relay.RelayServer(
                com.sun.net.httpserver.HttpServer.create(new java.net.InetSocketAddress("127.0.0.1", 0), 0), feed,
                new io.npmagent.agent.relay.Callers(cluster.controlPlane().admin(), java.util.Set.of("system:serviceaccount:kube-system:npm-agent")))) {
            startAgent(unit -> false, new KubeSource.PodRelay(cluster.agentClient().setBasePath("http://127.0.0.1:" + relay.port()), NODE));
            awaitConverged();
            assertMatchesServer();

            // Another node's pod changes (the relay's word), this node's pod changes (its own watch), a pod
            // pending without a node is scheduled here, one is deleted on each side.
            kube.pods().inNamespace("x").withName("p1").edit(p -> new PodBuilder(p).editMetadata().addToLabels("app", "db").endMetadata().build());
            kube.pods().inNamespace("x").withName("p0").edit(p -> new PodBuilder(p).editMetadata().addToLabels("app", "web").endMetadata().build());
            create(new PodBuilder(pod("x", "later", NODE, "10.0.0.50", "app", "db")).editSpec().withNodeName(null).endSpec().build());
            awaitConverged();
            kube.bindings().inNamespace("x").resource(new io.fabric8.kubernetes.api.model.BindingBuilder().withNewMetadata().withName("later").endMetadata()
                    .withNewTarget().withKind("Node").withName(NODE).endTarget().build()).create(); // as the scheduler binds it
            kube.pods().inNamespace("x").withName("p2").withGracePeriod(0).delete();
            kube.pods().inNamespace("x").withName("p3").withGracePeriod(0).delete();
            awaitConverged();
            assertMatchesServer();
            assertThat(backend.state().pods()).as("this node's pods, the scheduled one among them").containsKey(new io.npmagent.dataplane.model.PodKey("x", "later"));
            assertThat(agent.failures()).isEmpty();

            assertThat(cluster.controlPlane().audited()).as("every pod request of the agent's to the API server selects its node")
                    .filteredOn(r -> r.resource().equals("pods") && !r.verb().equals("create")).isNotEmpty()
                    .allSatisfy(r -> assertThat(r.uri()).contains("fieldSelector=spec.nodeName%3D" + NODE));
        } finally {
            upstream.stop();
            reading.interrupt();
        }
    }

    @Test
    void aClusterOfManyPodsIsReadWholeAsOneWatchList() throws Exception {
        create(namespace("x", "team", "a"));
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> creates = new ArrayList<>();
            for (int i = 0; i < 2345; i++) {
                Pod p = pod("x", "p" + i, i % 100 == 0 ? NODE : "node-b", "10.1." + (i / 250) + "." + (i % 250 + 1), "app", i % 2 == 0 ? "db" : "web");
                creates.add(pool.submit(() -> create(p)));
            }
            for (Future<?> f : creates) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
        create(policy("x", "db-from-web", "app", "db", "app", "web", null, 443));
        startAgent();
        awaitConverged();
        assertThat(backend.state().pods()).hasSize(24);
        assertThat(backend.state().addresses()).hasSize(2345);
        List<ControlPlane.Audited> audited = cluster.controlPlane().audited();
        assertThat(audited).as("pods never listed").filteredOn(r -> r.verb().equals("list") && r.resource().equals("pods")).isEmpty();
        assertThat(audited).as("but read whole as a WatchList at any version, then watched")
                .filteredOn(r -> r.verb().equals("watch") && r.resource().equals("pods")).extracting(ControlPlane.Audited::uri)
                .startsWith("/api/v1/pods?allowWatchBookmarks=true&resourceVersion=0&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true")
                .hasSizeGreaterThanOrEqualTo(2);
        assertThat(audited).as("namespaces in pages")
                .filteredOn(r -> r.verb().equals("list") && r.resource().equals("namespaces")).extracting(ControlPlane.Audited::uri)
                .allMatch(uri -> uri.contains("limit=500"));
    }

    /** Lists of {@code resource} the agent's ServiceAccount made, by the audit log: list requests, and watches that begin with every object (WatchList). */
    private long agentLists(String resource) throws Exception {
        return cluster.controlPlane().audited().stream().filter(r -> r.resource().equals(resource)
                && (r.verb().equals("list") || r.verb().equals("watch") && r.uri().contains("sendInitialEvents=true"))).count();
    }

    // ----- the server's truth, and the comparison -----

    /** What the server holds, read with fabric8's client and decoded as client-java would. */
    private ClusterState serverState() {
        List<ClusterEvent> events = new ArrayList<>();
        kube.namespaces().list().getItems().forEach(n -> events.add(new ClusterEvent.NamespaceUpserted(KubeObjects.namespace(convert(n, V1Namespace.class)))));
        kube.pods().inAnyNamespace().list().getItems().forEach(p -> {
            V1Pod pod = convert(p, V1Pod.class);
            events.add(new ClusterEvent.PodUpserted(KubeObjects.pod(pod, new FieldErrors(new ObjectRef("Pod", "", "")))));
        });
        kube.network().v1().networkPolicies().inAnyNamespace().list().getItems()
                .forEach(p -> events.add(new ClusterEvent.PolicyUpserted(KubeObjects.policy(convert(p, V1NetworkPolicy.class)))));
        kube.nodes().list().getItems().forEach(n -> events.add(new ClusterEvent.NodeUpserted(KubeObjects.node(convert(n, V1Node.class)))));
        for (String json : cluster.clusterNetworkPolicies()) {
            JsonObject o = JsonParser.parseString(json).getAsJsonObject();
            String name = o.getAsJsonObject("metadata").get("name").getAsString();
            events.add(new ClusterEvent.ClusterPolicyUpserted(ClusterPolicyJson.read(name, o, new FieldErrors(ObjectRef.clusterNetworkPolicy(name)))));
        }
        return ClusterState.EMPTY.applyAll(events);
    }

    /**
     * Without the CRD the agent starts and enforces NetworkPolicy; once the CRD is installed it takes up
     * ClusterNetworkPolicies (those made before it saw the CRD, and later edits), and once the CRD is
     * removed (and every object of it with it) it drops them.
     */
    @Test
    void clusterNetworkPoliciesAreTakenUpWhenTheirCrdAppearsAndDroppedWhenItGoes() throws Exception {
        create(namespace("x", "team", "a"));
        create(pod("x", "db", NODE, "10.0.0.1", "app", "db"), pod("x", "web", "node-b", "10.0.0.2", "app", "web"));
        create(policy("x", "db-from-web", "app", "db", "app", "web", null, 443));
        startAgent();
        awaitConverged();
        assertThat(backend.state().policies()).hasSize(1);
        assertThat(backend.state().clusterPolicies()).isEmpty();

        cluster.installClusterNetworkPolicies(NetworkPolicyApi.Channel.STANDARD);
        cluster.applyClusterNetworkPolicy(ADMIN_DENY_WEB.formatted(443));
        awaitConverged();
        assertThat(backend.state().clusterPolicies()).containsOnlyKeys("deny-web");
        assertMatchesServer();
        Verdict denied = new ReferenceEvaluator(serverState()).allowed(Endpoint.external("10.0.0.2"), Endpoint.external("10.0.0.1"), 443, Protocol.TCP);
        assertThat(denied.allowed()).as("the Admin Deny overrides the NetworkPolicy's allow: %s", denied.explain()).isFalse();

        cluster.applyClusterNetworkPolicy(ADMIN_DENY_WEB.formatted(80));
        awaitConverged();
        assertMatchesServer();

        cluster.removeClusterNetworkPolicies();
        awaitConverged();
        assertThat(backend.state().clusterPolicies()).isEmpty();
        assertThat(backend.state().policies()).hasSize(1);
        assertThat(agent.failures()).isEmpty();
    }

    private static final String ADMIN_DENY_WEB = """
            apiVersion: policy.networking.k8s.io/v1beta1
            kind: ClusterNetworkPolicy
            metadata:
              name: deny-web
            spec:
              tier: Admin
              priority: 10
              subject:
                pods:
                  namespaceSelector: {}
                  podSelector: {matchLabels: {app: db}}
              ingress:
              - name: no-web
                action: Deny
                from:
                - pods:
                    namespaceSelector: {}
                    podSelector: {matchLabels: {app: web}}
                protocols:
                - tcp: {destinationPort: {number: %d}}
            """;

    private static <T> T convert(HasMetadata object, Class<T> type) {
        return CLIENT_JSON.deserialize(Serialization.asJson(object), type);
    }

    /**
     * A policy the kernel refuses: the rest lands, and the policy's owner hears it on the object, as a
     * Warning Event naming the node and the kernel's words (once, though it is retried).
     */
    @Test
    void aPolicyTheKernelRefusesGetsAnApplyFailedEventAndTheRestLands() throws Exception {
        create(namespace("x", "team", "a"));
        create(pod("x", "db", NODE, "10.0.0.1", "app", "db"), pod("x", "web", "node-b", "10.0.0.2", "app", "web"));
        create(policy("x", "good", "app", "db", "app", "web", null, 443), policy("x", "bad", "app", "db", "app", "web", null, 80));
        startAgent(unit -> unit.equals(new io.npmagent.dataplane.backend.Batch.UnitKey.Policy(new io.npmagent.dataplane.model.PolicyKey("x", "bad"))));
        try (io.npmagent.agent.source.k8s.ProblemEvents events = new io.npmagent.agent.source.k8s.ProblemEvents(cluster.agentClient(), NODE)) {
            Instant deadline = Instant.now().plusSeconds(30);
            java.util.List<io.fabric8.kubernetes.api.model.Event> applyFailed = java.util.List.of();
            while (Instant.now().isBefore(deadline) && applyFailed.isEmpty()) {
                events.reportRefusals(agent.refusedObjects());
                applyFailed = kube.v1().events().inNamespace("x").list().getItems().stream()
                        .filter(e -> "ApplyFailed".equals(e.getReason())).toList();
                Thread.sleep(100);
            }
            assertThat(applyFailed).singleElement().satisfies(e -> {
                assertThat(e.getType()).isEqualTo("Warning");
                assertThat(e.getInvolvedObject().getKind()).isEqualTo("NetworkPolicy");
                assertThat(e.getInvolvedObject().getName()).isEqualTo("bad");
                assertThat(e.getMessage()).contains("node " + NODE, "fake kernel: refused NetworkPolicy x/bad");
                assertThat(e.getSource().getHost()).isEqualTo(NODE);
            });
            for (int i = 0; i < 5; i++) {
                events.reportRefusals(agent.refusedObjects());
            }
        }
        assertThat(backend.state().policies()).containsKey(new io.npmagent.dataplane.model.PolicyKey("x", "good"))
                .doesNotContainKey(new io.npmagent.dataplane.model.PolicyKey("x", "bad"));
        assertThat(kube.v1().events().inNamespace("x").list().getItems().stream().filter(e -> "ApplyFailed".equals(e.getReason())))
                .as("one event for one failure, however often it is retried").hasSize(1);
    }

    private void awaitConverged() {
        Await.until(Duration.ofSeconds(30), "the agent to apply what the server holds", () -> {
            AgentStatus s = loop.latest();
            try {
                return s != null && s.appliedGeneration() > 0 && s.appliedGeneration() == s.seenGeneration() && source().equals(expected())
                        && s.appliedHash().equals(ServerDigest.of(cluster.controlPlane().admin()));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, () -> "last status: " + loop.latest());
    }

    private CanonicalState source() {
        return CanonicalState.of(backend.state());
    }

    private CanonicalState expected() {
        return CanonicalState.of(PolicyCompiler.compile(serverState(), NODE));
    }

    private void assertMatchesServer() {
        ClusterState cluster = serverState();
        DesiredState applied = backend.state();
        assertThat(CanonicalState.of(applied)).as("backend state vs a compile from scratch of the server's objects")
                .isEqualTo(CanonicalState.of(PolicyCompiler.compile(cluster, NODE)));
        ReferenceEvaluator evaluator = new ReferenceEvaluator(cluster);
        DesiredStateInterpreter interpreter = new DesiredStateInterpreter(applied);
        int checked = 0;
        for (var src : cluster.pods().values()) {
            for (var dst : cluster.pods().values()) {
                if (src == dst || src.ips().isEmpty() || dst.ips().isEmpty() || !NODE.equals(dst.nodeName())) {
                    continue;
                }
                IpAddress from = src.ips().get(0);
                IpAddress to = dst.ips().get(0);
                for (int port : PORTS) {
                    Verdict v = evaluator.allowed(Endpoint.external(from), Endpoint.external(to), port, Protocol.TCP);
                    DesiredStateInterpreter.Outcome ingress = interpreter.side(v.ingress().direction(), from, to, port, Protocol.TCP);
                    assertThat(ingress).as("%s", v.explain())
                            .isEqualTo(v.ingress().allowed() ? DesiredStateInterpreter.Outcome.ALLOW : DesiredStateInterpreter.Outcome.DENY);
                    checked++;
                }
            }
        }
        assertThat(checked).isPositive();
    }

    // ----- objects -----

    private void create(HasMetadata... objects) {
        cluster.create(objects);
    }

    private static Namespace namespace(String name, String key, String value) {
        return new NamespaceBuilder().withNewMetadata().withName(name).withLabels(Map.of(key, value, "kubernetes.io/metadata.name", name))
                .endMetadata().build();
    }

    private static Pod pod(String ns, String name, String node, String ip, String key, String value) {
        return new PodBuilder().withNewMetadata().withNamespace(ns).withName(name).withLabels(Map.of(key, value))
                .addToAnnotations("kubectl.kubernetes.io/last-applied-configuration", "{\"big\": \"" + "x".repeat(2000) + "\"}")
                .endMetadata()
                .withNewSpec().withNodeName(node).addNewContainer().withName("c").withImage("registry.invalid/web").addNewPort().withContainerPort(80).endPort()
                .addNewPort().withContainerPort(443).endPort().endContainer().endSpec()
                .withNewStatus().withPhase("Running").withPodIP(ip).addNewPodIP(ip).endStatus()
                .build();
    }

    /** Ingress to pods with {@code key=value} from pods with {@code fromKey=fromValue} (or from namespaces with team=fromTeam) on {@code port}. */
    private static NetworkPolicy policy(String ns, String name, String key, String value, String fromKey, String fromValue, String fromTeam, int port) {
        var peer = new io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeerBuilder();
        if (fromKey != null) {
            peer.withNewPodSelector().addToMatchLabels(fromKey, fromValue).endPodSelector();
        } else {
            peer.withNewNamespaceSelector().addToMatchLabels("team", fromTeam).endNamespaceSelector();
        }
        return new NetworkPolicyBuilder().withNewMetadata().withNamespace(ns).withName(name).endMetadata()
                .withNewSpec().withNewPodSelector().addToMatchLabels(key, value).endPodSelector().withPolicyTypes("Ingress")
                .addNewIngress().withFrom(peer.build()).addNewPort().withProtocol("TCP").withPort(new io.fabric8.kubernetes.api.model.IntOrString(port)).endPort().endIngress()
                .endSpec().build();
    }
}
