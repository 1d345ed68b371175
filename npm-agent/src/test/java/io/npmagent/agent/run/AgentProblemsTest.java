package io.npmagent.agent.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.agent.backend.Backends;
import io.npmagent.dataplane.backend.FakeBackend;
import io.npmagent.dataplane.bandwidth.BandwidthAnnotations;
import io.npmagent.dataplane.bandwidth.CongestionAnnotation;
import io.npmagent.dataplane.batch.QueueConfig;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.Pod;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AgentProblemsTest {

    private static ClusterState cluster(String egress) {
        return ClusterState.EMPTY.applyAll(List.of(
                new ClusterEvent.NamespaceUpserted(new Namespace("shop", Map.of())),
                new ClusterEvent.PodUpserted(Pod.builder("shop", "web").ip("10.0.0.1").build()),
                new ClusterEvent.PodUpserted(Pod.builder("shop", "api").ip("10.0.0.2")
                        .annotations(Map.of(BandwidthAnnotations.EGRESS, egress)).build())));
    }

    @Test
    void aBackendThatEnforcesNoLimitsSaysWhichPodsItLeaves() {
        PrometheusRegistry registry = new PrometheusRegistry();
        try (Agent agent = new Agent(new Backends.Chosen(new FakeBackend(), "fake"), null, QueueConfig.DEFAULTS, registry,
                new Metrics(registry), Duration.ofMinutes(1))) {
            agent.apply(cluster("10M"));
            assertThat(agent.problems()).containsExactly(
                    "bandwidth limits of 1 local pods are not enforced: the fake backend enforces none, only bpf does (first: shop/api)");
        }
    }

    @Test
    void aBadAnnotationIsAProblemNamingThePodAndValue() {
        PrometheusRegistry registry = new PrometheusRegistry();
        try (Agent agent = new Agent(new Backends.Chosen(new FakeBackend(), "fake"), null, QueueConfig.DEFAULTS, registry,
                new Metrics(registry), Duration.ofMinutes(1))) {
            agent.apply(cluster("10 megabits"));
            assertThat(agent.problems()).singleElement().asString()
                    .contains("Pod shop/api", "kubernetes.io/egress-bandwidth", "\"10 megabits\"", "not a quantity");
            assertThat(agent.converged()).as("the pod's policies still apply").isTrue();
        }
    }

    @Test
    void aBackendThatAppliesNoCongestionControlsSaysWhichPodsKeepTheDefault() {
        PrometheusRegistry registry = new PrometheusRegistry();
        try (Agent agent = new Agent(new Backends.Chosen(new FakeBackend(), "fake"), null, QueueConfig.DEFAULTS, registry,
                new Metrics(registry), Duration.ofMinutes(1))) {
            agent.apply(ClusterState.EMPTY.applyAll(List.of(
                    new ClusterEvent.NamespaceUpserted(new Namespace("shop", Map.of())),
                    new ClusterEvent.PodUpserted(Pod.builder("shop", "web").ip("10.0.0.1")
                            .annotations(Map.of(CongestionAnnotation.ANNOTATION, "bbr")).build()))));
            assertThat(agent.problems()).containsExactly("TCP congestion controls of 1 local pods are not applied: the fake backend "
                    + "applies none (only bpf does, given --cgroup-root); their connections keep the default (first: shop/web)");
        }
    }
}
