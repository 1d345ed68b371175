package io.npmagent.agent.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import io.npmagent.agent.backend.Backends;
import io.npmagent.agent.run.Agent;
import io.npmagent.agent.run.KubeLoop;
import io.npmagent.agent.source.k8s.KubeSource;
import io.npmagent.agent.source.k8s.MockApiServer;
import io.npmagent.agent.source.k8s.ProblemEvents;
import io.npmagent.dataplane.backend.FakeBackend;
import io.npmagent.dataplane.batch.QueueConfig;
import io.npmagent.dataplane.metrics.Metrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The ClusterRole grants exactly what the agent asks of the API server: the agent runs against the mock
 * server through everything that makes it call (start, a restart that drops every watch, expired watches
 * that force relists, an invalid policy that it reports as an Event), every request it makes is
 * turned into the (API group, resource, verb) that RBAC checks, and that set must equal the role's.
 */
class RbacMatchesApiCallsTest {
    /** /api/v1[/namespaces/NS]/RESOURCE[/NAME] or /apis/GROUP/VERSION[/namespaces/NS]/RESOURCE[/NAME] */
    private static final Pattern PATH =
            Pattern.compile("^/(?:api/v1|apis/([^/]+)/[^/]+)(?:/namespaces/[^/]+)?/([^/]+)(/[^/]+)?$");

    @Test
    void theClusterRoleGrantsExactlyWhatTheAgentCalls() throws Exception {
        Set<String> called = new TreeSet<>();
        try (MockApiServer api = new MockApiServer(); NamespacedKubernetesClient kube = api.client()) {
            kube.resource(new NamespaceBuilder().withNewMetadata().withName("x").endMetadata().build()).create();
            kube.resource(new PodBuilder().withNewMetadata().withNamespace("x").withName("a").addToLabels("app", "a").endMetadata()
                    .withNewSpec().withNodeName("node-1").addNewContainer().withName("c").withImage("i").endContainer().endSpec()
                    .withNewStatus().withPodIP("10.0.0.1").endStatus().build()).create();
            // An invalid policyTypes value: the agent enforces the policy closed and says so with an Event.
            kube.resource(new NetworkPolicyBuilder().withNewMetadata().withNamespace("x").withName("bad").endMetadata()
                    .withNewSpec().withNewPodSelector().endPodSelector().withPolicyTypes("Sideways").endSpec().build()).create();

            FakeBackend backend = new FakeBackend();
            PrometheusRegistry registry = new PrometheusRegistry();
            Agent agent = new Agent(new Backends.Chosen(backend, "fake"), "node-1", QueueConfig.DEFAULTS, registry, new Metrics(registry),
                    Duration.ofMinutes(10));
            KubeLoop loop = new KubeLoop(new KubeSource(api.apiClient(), Duration.ofMinutes(10)), agent, null);
            ProblemEvents events = new ProblemEvents(api.apiClient(), "node-1");
            loop.afterEachStep(() -> events.report(agent.objectErrors()));
            Thread t = new Thread(() -> loop.run(Duration.ofMillis(20)));
            t.start();
            try {
                await(() -> !kube.v1().events().inNamespace("x").list().getItems().isEmpty());
                Event event = kube.v1().events().inNamespace("x").list().getItems().get(0);
                assertThat(event.getInvolvedObject().getName()).isEqualTo("bad");
                assertThat(event.getType()).isEqualTo("Warning");
                assertThat(event.getReason()).isEqualTo("InvalidNetworkPolicy");
                assertThat(event.getMessage()).contains("spec.policyTypes").contains("node-1");

                api.expireNextWatches(3);
                api.restart();
                await(() -> api.requests().stream().filter(r -> r.contains("watch=true")).count() >= 9);
            } finally {
                loop.stop(Duration.ofSeconds(10));
                events.close();
            }
            for (String request : api.requests()) {
                called.add(permission(request));
            }
        }
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
        assertThat(called).as("what the agent called").contains(" pods list", " pods watch", " events create");
        assertThat(granted).as("the ClusterRole in %s", DeployManifests.RBAC).isEqualTo(called);
    }

    /** "GROUP RESOURCE VERB" for one request, as the API server's authorizer sees it. */
    private static String permission(String request) {
        String[] parts = request.split(" ", 2);
        URI uri = URI.create(parts[1]);
        Matcher m = PATH.matcher(uri.getPath());
        if (!m.matches()) {
            throw new AssertionError("a request the check cannot place: " + request);
        }
        String group = m.group(1) == null ? "" : m.group(1);
        boolean named = m.group(3) != null;
        boolean watch = uri.getQuery() != null && uri.getQuery().contains("watch=true");
        String verb = switch (parts[0]) {
            case "GET" -> watch ? "watch" : named ? "get" : "list";
            case "POST" -> "create";
            case "PUT" -> "update";
            case "PATCH" -> "patch";
            case "DELETE" -> named ? "delete" : "deletecollection";
            default -> throw new AssertionError("unexpected method in " + request);
        };
        return group + " " + m.group(2) + " " + verb;
    }

    private static void await(java.util.function.BooleanSupplier done) throws InterruptedException {
        Instant deadline = Instant.now().plusSeconds(30);
        while (!done.getAsBoolean()) {
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("gave up waiting");
            }
            Thread.sleep(50);
        }
    }
}
