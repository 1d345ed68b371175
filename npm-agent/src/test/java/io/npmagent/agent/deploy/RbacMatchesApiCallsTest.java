package io.npmagent.agent.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.harness.process.Await;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import io.npmagent.agent.backend.Backends;
import io.npmagent.harness.controlplane.AgentIdentity;
import io.npmagent.harness.controlplane.ControlPlane;
import io.npmagent.harness.controlplane.NetworkPolicyApi;
import io.npmagent.agent.cluster.TestCluster;
import io.npmagent.agent.run.Agent;
import io.npmagent.agent.run.AgentStatus;
import io.npmagent.agent.run.KubeLoop;
import io.npmagent.agent.source.k8s.KubeSource;
import io.npmagent.agent.source.k8s.ProblemEvents;
import io.npmagent.dataplane.backend.FakeBackend;
import io.npmagent.dataplane.batch.QueueConfig;
import io.npmagent.dataplane.metrics.Metrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ClusterRole in {@code deploy/rbac.yaml}, applied as shipped to a real API server, against what
 * the agent, on its ServiceAccount's token, asks of it. The API server's audit log records every
 * request of that account with the verb and resource its authorizer judged; through start, a restart,
 * an outage that ends in 410 Gone and relists, and an object the agent reports as an Event, that set
 * must equal the role's grants, and none may stay refused (a restarted server refuses for a moment,
 * before its RBAC caches fill). A role that grants too little shows as a call it lacks here, and (second test) as an agent that is not ready and says which grant is missing.
 */
class RbacMatchesApiCallsTest {
    private static final String NODE = "node-1";

    @TempDir
    Path tmp;
    private TestCluster cluster;
    private KubeLoop loop;
    private ProblemEvents events;

    @BeforeEach
    void cluster() throws Exception {
        cluster = TestCluster.start(tmp.resolve("cluster"));
    }

    @AfterEach
    void stop() {
        if (loop != null) {
            loop.stop(Duration.ofSeconds(10));
        }
        if (events != null) {
            events.close();
        }
        cluster.close();
    }

    @Test
    void theClusterRoleGrantsExactlyWhatTheAgentCalls() throws Exception {
        cluster.create(new NamespaceBuilder().withNewMetadata().withName("x").endMetadata().build());
        // A bandwidth annotation the agent cannot read: it enforces the pod without a limit it cannot parse
        // and says so with an Event. (An invalid policy never gets this far: the API server rejects it.)
        cluster.create(new PodBuilder().withNewMetadata().withNamespace("x").withName("a").addToLabels("app", "a")
                .addToAnnotations("kubernetes.io/egress-bandwidth", "fast").endMetadata()
                .withNewSpec().withNodeName(NODE).addNewContainer().withName("c").withImage("registry.invalid/a").endContainer().endSpec()
                .withNewStatus().withPhase("Running").withPodIP("10.0.0.1").addNewPodIP("10.0.0.1").endStatus().build());
        // ClusterNetworkPolicies served, and one with a domainNames peer, which the agent does not support: it
        // says so with an Event (of a cluster-scoped object, in "default"). The Experimental channel's CRD: the
        // Standard one prunes domainNames, and then refuses the peer as empty.
        cluster.installClusterNetworkPolicies(NetworkPolicyApi.Channel.EXPERIMENTAL);
        cluster.applyClusterNetworkPolicy("""
                apiVersion: policy.networking.k8s.io/v1beta1
                kind: ClusterNetworkPolicy
                metadata: {name: no-example}
                spec:
                  tier: Admin
                  priority: 5
                  subject: {namespaces: {}}
                  egress:
                  - {action: Deny, to: [{domainNames: [example.com]}]}
                """);
        startAgent();
        await(() -> !cluster.admin().v1().events().inNamespace("x").list().getItems().isEmpty(), "the agent's Event");
        await(() -> !cluster.admin().v1().events().inNamespace("default").list().getItems().isEmpty(), "the agent's Event on the CNP");
        Event cnpEvent = cluster.admin().v1().events().inNamespace("default").list().getItems().get(0);
        assertThat(cnpEvent.getInvolvedObject().getKind()).isEqualTo("ClusterNetworkPolicy");
        assertThat(cnpEvent.getInvolvedObject().getApiVersion()).isEqualTo("policy.networking.k8s.io/v1beta1");
        assertThat(cnpEvent.getReason()).isEqualTo("InvalidClusterNetworkPolicy");
        assertThat(cnpEvent.getMessage()).contains("spec.egress[0].to[0].domainNames").contains("not supported").contains(NODE);
        Event event = cluster.admin().v1().events().inNamespace("x").list().getItems().get(0);
        assertThat(event.getInvolvedObject().getName()).isEqualTo("a");
        assertThat(event.getType()).isEqualTo("Warning");
        assertThat(event.getReason()).isEqualTo("InvalidPod");
        assertThat(event.getMessage()).contains("kubernetes.io/egress-bandwidth").contains(NODE);

        cluster.controlPlane().restartApiServer();
        // A change while the agent cannot watch, then compaction past it: the agent's relist at its old
        // version gets 410 Gone.
        cluster.controlPlane().outageWithWrites(kubeconfig -> {
            try (io.fabric8.kubernetes.client.KubernetesClient other = new io.fabric8.kubernetes.client.KubernetesClientBuilder()
                    .withConfig(io.fabric8.kubernetes.client.Config.fromKubeconfig(java.nio.file.Files.readString(kubeconfig))).build()) {
                other.resource(new NamespaceBuilder().withNewMetadata().withName("y").endMetadata().build()).create();
            }
        });
        // The 410 comes either as the answer to a relist at the old version or inside a resumed watch's
        // stream (which the audit log records as 200); either way the namespace informer lists again.
        // Counted only when answered: a restarted API server refuses (403) until its RBAC caches fill, and
        // the refused call is retried.
        java.util.function.LongSupplier lists = () -> audited().stream()
                .filter(r -> r.verb().equals("list") && r.resource().equals("namespaces") && r.code() < 400).count();
        long before = lists.getAsLong();
        cluster.controlPlane().restartApiServer();
        await(() -> loop.latest() != null && loop.latest().appliedGeneration() == loop.latest().seenGeneration()
                && lists.getAsLong() > before, "a relist after the outage");

        // A call refused while the restarted server's RBAC caches filled is retried with backoff, which on a
        // loaded machine can come after the namespaces' relist: wait (bounded) for every refusal to be
        // answered after; a permission the role lacks never is, and the assertion below names it.
        Instant settle = Instant.now().plusSeconds(30);
        while (!refusedNeverAllowedAfter().isEmpty() && Instant.now().isBefore(settle)) {
            Thread.sleep(200);
        }
        Set<String> called = new TreeSet<>();
        Set<String> discovery = new TreeSet<>();
        for (ControlPlane.Audited r : audited()) {
            if (r.resource().isEmpty()) {
                discovery.add(r.verb() + " " + r.uri()); // no resource: discovery, which system:discovery grants every account
            } else {
                called.add(permission(r));
            }
        }
        assertThat(discovery).as("the non-resource requests: whether ClusterNetworkPolicies are served")
                .containsExactly("get /apis/policy.networking.k8s.io/v1beta1");
        Set<String> refused = refusedNeverAllowedAfter();
        assertThat(refused).as("calls the API server refused and never allowed after").isEmpty();
        Set<String> granted = new TreeSet<>();
        for (V1PolicyRule rule : DeployManifests.clusterRole().getRules()) {
            assertThat(rule.getResourceNames()).as("rules name no single objects").isNullOrEmpty();
            for (String group : rule.getApiGroups()) {
                for (String resource : rule.getResources()) {
                    for (String verb : rule.getVerbs()) {
                        granted.add(group + " " + resource + " " + verb);
                    }
                }
            }
        }
        assertThat(called).as("what the agent called: pods as a WatchList, a watch").contains(" pods watch", " events create", " nodes watch",
                "policy.networking.k8s.io clusternetworkpolicies watch").doesNotContain(" pods list");
        // One grant more than a WatchList calls for: listing pods in pages, which the agent does on a server
        // that gives no WatchList (PodWatchList; PodWatchListRefusalTest).
        Set<String> needed = new TreeSet<>(called);
        needed.add(" pods list");
        assertThat(granted).as("the ClusterRole in %s", DeployManifests.RBAC).isEqualTo(needed);
    }

    @Test
    void aGrantTheRoleLacksKeepsTheAgentUnreadyNamingItUntilItReturns() throws Exception {
        V1ClusterRole narrowed = AgentIdentity.shippedClusterRole();
        narrowed.getRules().stream().filter(r -> r.getResources().contains("networkpolicies")).forEach(r -> r.setVerbs(List.of("watch")));
        AgentIdentity.replaceClusterRole(cluster.controlPlane().admin(), narrowed);
        cluster.create(new NamespaceBuilder().withNewMetadata().withName("x").endMetadata().build());
        startAgent();
        await(() -> loop.latest() != null && !loop.latest().denied().isEmpty(), "the agent to report the refusal");
        AgentStatus s = loop.latest();
        assertThat(s.denied()).singleElement().asString().contains("forbids list networkpolicies")
                .contains("system:serviceaccount:kube-system:npm-agent").contains("cannot list resource \"networkpolicies\"");
        assertThat(s.appliedGeneration()).as("nothing applied without the policies").isZero();

        AgentIdentity.replaceClusterRole(cluster.controlPlane().admin(), AgentIdentity.shippedClusterRole());
        await(() -> loop.latest().denied().isEmpty() && loop.latest().appliedGeneration() > 0, "the agent to recover once the grant is back");
    }

    private static String permission(ControlPlane.Audited r) {
        return r.group() + " " + r.resource() + (r.subresource().isEmpty() ? "" : "/" + r.subresource()) + " " + r.verb();
    }

    /**
     * Calls the API server refused that the same call never succeeded after: a restarted API server
     * answers before its RBAC caches have filled and refuses for a moment, which is not the role's fault.
     */
    private Set<String> refusedNeverAllowedAfter() {
        Set<String> refused = new TreeSet<>();
        for (ControlPlane.Audited r : audited()) {
            if (r.code() == 403) {
                refused.add(permission(r));
            } else if (r.code() < 400) {
                refused.remove(permission(r));
            }
        }
        return refused;
    }

    private List<ControlPlane.Audited> audited() {
        try {
            return cluster.controlPlane().audited();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private void startAgent() throws Exception {
        FakeBackend backend = new FakeBackend();
        PrometheusRegistry registry = new PrometheusRegistry();
        Agent agent = new Agent(new Backends.Chosen(backend, "fake"), NODE, new QueueConfig(true, true, 100, Duration.ofMillis(50)), registry,
                new Metrics(registry), Duration.ofMinutes(10));
        loop = new KubeLoop(new KubeSource(cluster.agentClient(), Duration.ofMinutes(10)), agent, null);
        events = new ProblemEvents(cluster.agentClient(), NODE);
        loop.afterEachStep(() -> events.report(agent.objectErrors()));
        Thread t = new Thread(() -> loop.run(Duration.ofMillis(20)), "rbac-test-loop");
        t.start();
    }

    private static void await(BooleanSupplier done, String what) {
        Await.until(Duration.ofSeconds(60), what, done);
    }
}
