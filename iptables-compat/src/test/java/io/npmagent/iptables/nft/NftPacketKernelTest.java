package io.npmagent.iptables.nft;

import static io.npmagent.dataplane.model.PolicyFixtures.labels;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static io.npmagent.dataplane.model.PolicyFixtures.peers;
import static io.npmagent.dataplane.model.PolicyFixtures.pods;
import static io.npmagent.dataplane.model.PolicyFixtures.policy;
import static io.npmagent.dataplane.model.PolicyFixtures.port;
import static io.npmagent.dataplane.model.PolicyFixtures.ports;
import static io.npmagent.dataplane.model.PolicyFixtures.rule;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.desired.DesiredStateInterpreter;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.npmagent.iptables.kernel.KernelTestSupport;
import io.npmagent.iptables.kernel.PodNetwork;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Real packets: three pods behind a node, the nft backend in the node, TCP connects on both families.
 * Each step states which pairs connect, and the same answers must come from the desired state read
 * without any kernel ({@link DesiredStateInterpreter}).
 */
class NftPacketKernelTest {
    private PodNetwork net;
    private NftBackend backend;
    private PolicyCompiler compiler;

    @BeforeEach
    void network() {
        KernelTestSupport.require("nft", "python3", "timeout", "bash", "sysctl");
        net = PodNetwork.create("a", "b", "c");
        backend = new NftBackend(net.node().runner(), new Metrics(new PrometheusRegistry()), Duration.ofSeconds(30));
        compiler = new PolicyCompiler(null);
        apply(new ClusterEvent.NamespaceUpserted(new Namespace("x", labels())));
        int i = 1;
        for (String name : new String[] {"a", "b", "c"}) {
            apply(new ClusterEvent.PodUpserted(Pod.builder("x", name).labels(labels("app", name))
                    .ip(PodNetwork.v4(i).toString()).ip(PodNetwork.v6(i).toString())
                    .port("iperf", PodNetwork.PORT, Protocol.TCP).build()));
            i++;
        }
    }

    @AfterEach
    void teardown() {
        if (net != null) {
            net.close();
        }
    }

    private void apply(ClusterEvent e) {
        backend.apply(new Batch(compiler.apply(e).delta()));
    }

    /** Pairs (both families) that must not connect; every other pair must. */
    private void expectBlocked(String step, String... blocked) {
        Set<String> denied = Set.of(blocked);
        Map<String, Boolean> expected = new TreeMap<>();
        Map<String, Boolean> reference = new TreeMap<>();
        Map<String, Boolean> actual = new TreeMap<>();
        DesiredStateInterpreter interpreter = new DesiredStateInterpreter(compiler.snapshot());
        net.probeAll().forEach((pair, connected) -> {
            expected.put(pair.toString(), !denied.contains(pair.from() + "->" + pair.to()));
            reference.put(pair.toString(), interpreter.allowed(net.address(pair.from(), pair.v6()),
                    net.address(pair.to(), pair.v6()), PodNetwork.PORT, Protocol.TCP));
            actual.put(pair.toString(), connected);
        });
        assertThat(reference).as("%s: the desired state says what the test expects", step).isEqualTo(expected);
        assertThat(actual).as("%s: TCP connects through the node", step).isEqualTo(expected);
    }

    @Test
    void policiesDecideWhichConnectionsGetThrough() {
        expectBlocked("no policy");

        apply(new ClusterEvent.PolicyUpserted(policy("x", "deny-b").select(match("app", "b")).types("Ingress").build()));
        // b's own connections still get their replies back; a and c still talk to each other.
        expectBlocked("default-deny ingress on b", "a->b", "c->b");

        apply(new ClusterEvent.PolicyUpserted(policy("x", "a-to-b").select(match("app", "b"))
                .ingress(rule(peers(pods(match("app", "a"))), ports(port("TCP", PodNetwork.PORT)))).build()));
        expectBlocked("b admits a", "c->b");

        apply(new ClusterEvent.PolicyUpserted(policy("x", "a-egress").select(match("app", "a")).types("Egress")
                .egress(rule(peers(pods(match("app", "c"))), ports(port("TCP", PodNetwork.PORT)))).build()));
        // a may reach only c now, though b would admit it; connections to a still get their replies.
        expectBlocked("a may reach only c", "a->b", "c->b");

        for (String name : new String[] {"deny-b", "a-to-b", "a-egress"}) {
            apply(new ClusterEvent.PolicyDeleted(new PolicyKey("x", name)));
        }
        expectBlocked("policies removed");
        assertThat(backend.reconcile()).isZero();
    }

    @Test
    void aRestartedAgentKeepsEnforcingWhileItAdopts() {
        apply(new ClusterEvent.PolicyUpserted(policy("x", "deny-b").select(match("app", "b")).types("Ingress").build()));
        expectBlocked("before the restart", "a->b", "c->b");
        NftBackend restarted = new NftBackend(net.node().runner(), new Metrics(new PrometheusRegistry()), Duration.ofSeconds(30));
        restarted.apply(new Batch(NftFixtures.fromEmpty(compiler.snapshot())));
        expectBlocked("after the restart", "a->b", "c->b");
        restarted.uninstall();
        assertThat(net.probeAll()).as("after uninstall nothing is judged").allSatisfy((pair, connected) ->
                assertThat(connected).as(pair.toString()).isTrue());
    }
}
