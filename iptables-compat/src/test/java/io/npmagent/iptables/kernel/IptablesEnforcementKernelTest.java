package io.npmagent.iptables.kernel;

import static io.npmagent.dataplane.model.PolicyFixtures.labels;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static io.npmagent.dataplane.model.PolicyFixtures.peers;
import static io.npmagent.dataplane.model.PolicyFixtures.pods;
import static io.npmagent.dataplane.model.PolicyFixtures.policy;
import static io.npmagent.dataplane.model.PolicyFixtures.port;
import static io.npmagent.dataplane.model.PolicyFixtures.ports;
import static io.npmagent.dataplane.model.PolicyFixtures.rule;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.backend.Backend;
import io.npmagent.dataplane.batch.BatchQueue;
import io.npmagent.dataplane.batch.ManualScheduler;
import io.npmagent.dataplane.batch.MutableClock;
import io.npmagent.dataplane.batch.QueueConfig;
import io.npmagent.dataplane.batch.RetryPolicy;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.npmagent.iptables.IptablesBackend;
import io.npmagent.iptables.detect.IptablesVariant;
import io.npmagent.iptables.model.Family;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Real packets through the iptables backend: pods in namespaces, TCP connects through the node. */
class IptablesEnforcementKernelTest {
    private PodNetwork node;

    @AfterEach
    void remove() {
        if (node != null) {
            node.close();
        }
    }

    /** Pod {@code name} of the network, labelled app={@code app}. */
    private Pod pod(String name, String app) {
        return Pod.builder("x", name).labels(labels("app", app))
                .ip(node.address(name, false)).ip(node.address(name, true)).port("probe", PodNetwork.PORT, Protocol.TCP).build();
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void policiesDecideWhichConnectionsOpen(IptablesVariant variant) {
        KernelTestSupport.require("ipset", variant.restore(Family.IPV4));
        node = PodNetwork.create("a", "b", "c");
        Backend backend = new IptablesBackend(variant, node.node().runner(), new Metrics(new PrometheusRegistry()),
                IptablesBackend.Settings.DEFAULTS);
        PolicyCompiler compiler = new PolicyCompiler(null);
        BatchQueue queue = new BatchQueue(backend, QueueConfig.FOREGROUND, RetryPolicy.DEFAULTS, new MutableClock(),
                new ManualScheduler(), new Metrics(new PrometheusRegistry()));
        Consumer<ClusterEvent> apply = e -> queue.submit(compiler.apply(e).delta());

        apply.accept(new ClusterEvent.NamespaceUpserted(new Namespace("x", labels())));
        for (String p : new String[] {"a", "b", "c"}) {
            apply.accept(new ClusterEvent.PodUpserted(pod(p, p)));
        }
        assertThat(queue.failures()).isEmpty();
        assertThat(node.connects("a", "b", false)).as("no policy: open").isTrue();
        assertThat(node.connects("a", "b", true)).isTrue();

        apply.accept(new ClusterEvent.PolicyUpserted(policy("x", "deny-b").select(match("app", "b")).build()));
        assertThat(node.connects("a", "b", false)).as("b isolated").isFalse();
        assertThat(node.connects("a", "b", true)).isFalse();
        assertThat(node.connects("b", "a", false)).as("b's own connections are not ingress to b").isTrue();
        assertThat(node.connects("c", "a", false)).isTrue();

        apply.accept(new ClusterEvent.PolicyUpserted(policy("x", "b-from-a").select(match("app", "b"))
                .ingress(rule(peers(pods(match("app", "a"))), ports(port("TCP", PodNetwork.PORT)))).build()));
        assertThat(node.connects("a", "b", false)).as("admitted by b-from-a").isTrue();
        assertThat(node.connects("a", "b", true)).isTrue();
        assertThat(node.connects("c", "b", false)).as("c is not admitted").isFalse();

        apply.accept(new ClusterEvent.PodUpserted(pod("c", "a")));
        assertThat(node.connects("c", "b", false)).as("c now has a's labels").isTrue();
        apply.accept(new ClusterEvent.PodUpserted(pod("c", "c")));
        assertThat(node.connects("c", "b", false)).as("and lost them again").isFalse();

        apply.accept(new ClusterEvent.PolicyUpserted(policy("x", "a-only-to-c").select(match("app", "a")).types("Egress")
                .egress(rule(peers(pods(match("app", "c"))), null)).build()));
        assertThat(node.connects("a", "c", false)).isTrue();
        assertThat(node.connects("a", "b", false)).as("a's egress stops it, whatever b admits").isFalse();


        for (String p : new String[] {"deny-b", "b-from-a", "a-only-to-c"}) {
            apply.accept(new ClusterEvent.PolicyDeleted(new PolicyKey("x", p)));
        }
        assertThat(queue.failures()).isEmpty();
        assertThat(node.connects("a", "b", false)).as("open again").isTrue();
        assertThat(node.connects("c", "b", true)).isTrue();
    }
}
