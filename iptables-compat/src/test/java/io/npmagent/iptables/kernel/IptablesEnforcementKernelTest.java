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
    private TestNode node;

    @AfterEach
    void remove() {
        if (node != null) {
            node.close();
        }
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void policiesDecideWhichConnectionsOpen(IptablesVariant variant) {
        KernelTestSupport.require("ipset", variant.restore(Family.IPV4));
        node = TestNode.create("a", "b", "c");
        Backend backend = new IptablesBackend(variant, node.node().runner(), new Metrics(new PrometheusRegistry()),
                IptablesBackend.Settings.DEFAULTS);
        PolicyCompiler compiler = new PolicyCompiler(null);
        BatchQueue queue = new BatchQueue(backend, QueueConfig.FOREGROUND, RetryPolicy.DEFAULTS, new MutableClock(),
                new ManualScheduler(), new Metrics(new PrometheusRegistry()));
        Consumer<ClusterEvent> apply = e -> queue.submit(compiler.apply(e).delta());

        apply.accept(new ClusterEvent.NamespaceUpserted(new Namespace("x", labels())));
        for (String p : new String[] {"a", "b", "c"}) {
            apply.accept(new ClusterEvent.PodUpserted(Pod.builder("x", p).labels(labels("app", p))
                    .ip(node.ip(p)).ip(node.ip6(p)).port("iperf", TestNode.PORT, Protocol.TCP).build()));
        }
        assertThat(queue.failures()).isEmpty();
        assertThat(node.connects("a", node.ip("b"))).as("no policy: open").isTrue();
        assertThat(node.connects("a", node.ip6("b"))).isTrue();

        apply.accept(new ClusterEvent.PolicyUpserted(policy("x", "deny-b").select(match("app", "b")).build()));
        assertThat(node.connects("a", node.ip("b"))).as("b isolated").isFalse();
        assertThat(node.connects("a", node.ip6("b"))).isFalse();
        assertThat(node.connects("b", node.ip("a"))).as("b's own connections are not ingress to b").isTrue();
        assertThat(node.connects("c", node.ip("a"))).isTrue();

        apply.accept(new ClusterEvent.PolicyUpserted(policy("x", "b-from-a").select(match("app", "b"))
                .ingress(rule(peers(pods(match("app", "a"))), ports(port("TCP", TestNode.PORT)))).build()));
        assertThat(node.connects("a", node.ip("b"))).as("admitted by b-from-a").isTrue();
        assertThat(node.connects("a", node.ip6("b"))).isTrue();
        assertThat(node.connects("c", node.ip("b"))).as("c is not admitted").isFalse();

        apply.accept(new ClusterEvent.PodUpserted(Pod.builder("x", "c").labels(labels("app", "a"))
                .ip(node.ip("c")).ip(node.ip6("c")).port("iperf", TestNode.PORT, Protocol.TCP).build()));
        assertThat(node.connects("c", node.ip("b"))).as("c now has a's labels").isTrue();
        apply.accept(new ClusterEvent.PodUpserted(Pod.builder("x", "c").labels(labels("app", "c"))
                .ip(node.ip("c")).ip(node.ip6("c")).port("iperf", TestNode.PORT, Protocol.TCP).build()));
        assertThat(node.connects("c", node.ip("b"))).as("and lost them again").isFalse();

        apply.accept(new ClusterEvent.PolicyUpserted(policy("x", "a-only-to-c").select(match("app", "a")).types("Egress")
                .egress(rule(peers(pods(match("app", "c"))), null)).build()));
        assertThat(node.connects("a", node.ip("c"))).isTrue();
        assertThat(node.connects("a", node.ip("b"))).as("a's egress stops it, whatever b admits").isFalse();


        for (String p : new String[] {"deny-b", "b-from-a", "a-only-to-c"}) {
            apply.accept(new ClusterEvent.PolicyDeleted(new PolicyKey("x", p)));
        }
        assertThat(queue.failures()).isEmpty();
        assertThat(node.connects("a", node.ip("b"))).as("open again").isTrue();
        assertThat(node.connects("c", node.ip6("b"))).isTrue();
    }
}
