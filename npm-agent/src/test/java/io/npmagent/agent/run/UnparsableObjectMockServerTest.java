package io.npmagent.agent.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.npmagent.agent.backend.Backends;
import io.npmagent.agent.source.k8s.KubeSource;
import io.npmagent.agent.source.k8s.MockApiServer;
import io.npmagent.dataplane.backend.FakeBackend;
import io.npmagent.dataplane.batch.QueueConfig;
import io.npmagent.dataplane.metrics.Metrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * An object the model cannot hold (a pod whose {@code status.podIP} is not an address) is reported by
 * name and field, and the rest of the cluster is enforced.
 *
 * <p>Why the mock API server: a real kube-apiserver validates {@code status.podIP} and refuses such a
 * pod, so only a broken or non-conforming server (an aggregated API, a proxy that rewrites objects) can
 * send one. Everything a real server can produce is tested against one ({@link KubeLoopApiServerTest}).
 */
class UnparsableObjectMockServerTest {
    @Test
    void anObjectTheModelCannotHoldIsReportedAndTheRestIsEnforced() throws Exception {
        try (MockApiServer api = new MockApiServer(); NamespacedKubernetesClient kube = api.client()) {
            kube.resource(new NamespaceBuilder().withNewMetadata().withName("x").endMetadata().build()).create();
            for (String[] p : new String[][] {{"good", "10.0.0.1"}, {"bad", "10.0.0.999"}}) {
                kube.resource(new PodBuilder().withNewMetadata().withNamespace("x").withName(p[0]).addToLabels("app", "db").endMetadata()
                        .withNewSpec().withNodeName("node-a").addNewContainer().withName("c").withImage("i").endContainer().endSpec()
                        .withNewStatus().withPhase("Running").withPodIP(p[1]).addNewPodIP(p[1]).endStatus().build()).create();
            }
            FakeBackend backend = new FakeBackend();
            PrometheusRegistry registry = new PrometheusRegistry();
            Agent agent = new Agent(new Backends.Chosen(backend, "fake"), "node-a", new QueueConfig(true, true, 100, Duration.ofMillis(50)), registry,
                    new Metrics(registry), Duration.ofMinutes(10));
            KubeLoop loop = new KubeLoop(new KubeSource(api.apiClient(), Duration.ofMinutes(10)), agent, null);
            Thread t = new Thread(() -> loop.run(Duration.ofMillis(20)), "mock-loop");
            t.start();
            try {
                Instant deadline = Instant.now().plusSeconds(30);
                while (loop.latest() == null || loop.latest().appliedGeneration() == 0) {
                    assertThat(Instant.now()).as("the agent applied a first state").isBefore(deadline);
                    Thread.sleep(50);
                }
                assertThat(loop.latest().problems()).anySatisfy(p -> assertThat(p).contains("Pod x/bad").contains("status.podIP"));
                assertThat(backend.state().pods()).as("the good pod is enforced").hasSize(1);
            } finally {
                loop.stop(Duration.ofSeconds(10));
            }
        }
    }
}
