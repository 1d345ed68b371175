package io.npmagent.bpf.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.eval.Endpoint;
import io.npmagent.dataplane.eval.ReferenceEvaluator;
import io.npmagent.dataplane.eval.Verdict;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.policy.ClusterEventsForTests;
import io.npmagent.dataplane.policy.ClusterPolicyArbitraries;
import io.npmagent.dataplane.policy.PolicyCompiler;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The eBPF maps' contents, rendered from the compiler's deltas one after another and read back as the
 * programs read them, judge every connection as the reference evaluator does: random clusters with
 * selectors, ipBlocks (with excepts, covering pods), named ports that differ between pods, host-network,
 * terminal and address-less pods; and with ClusterNetworkPolicies and Nodes among the events.
 */
class BpfModelDifferentialPropertyTest {
    private static final List<Integer> PORTS = List.of(53, 80, 81, 8080, 9090);
    private static final List<String> OUTSIDE = List.of("10.0.0.200", "192.168.7.7", "fd00::99", "2001:db8::7");

    @Provide
    Arbitrary<List<ClusterEvent>> events() {
        return ClusterEventsForTests.event().list().ofMinSize(4).ofMaxSize(40);
    }

    @Provide
    Arbitrary<List<ClusterEvent>> eventsOfBothKinds() {
        return ClusterPolicyArbitraries.eventsOfBothKinds();
    }

    @Property(tries = 1000)
    void renderedMapsJudgeLikeTheEvaluator(@ForAll("events") List<ClusterEvent> events) {
        judgeLikeTheEvaluator(events);
    }

    /**
     * With ClusterNetworkPolicies among the events (Admin and Baseline, Pass, edits of priority and rules,
     * broken ones, Nodes peers): the walk's verdicts in the maps judge as the evaluator's tiers do.
     */
    @Property(tries = 600)
    void renderedTierVerdictsJudgeLikeTheEvaluator(@ForAll("eventsOfBothKinds") List<ClusterEvent> events) {
        judgeLikeTheEvaluator(events);
    }

    private static void judgeLikeTheEvaluator(List<ClusterEvent> events) {
        PolicyCompiler compiler = new PolicyCompiler(null);
        BpfModel model = new BpfModel();
        ClusterState cluster = ClusterState.EMPTY;
        for (ClusterEvent e : events) {
            cluster = cluster.apply(e);
            model.apply(compiler.apply(e).delta());
            if (e instanceof ClusterEvent.PolicyUpserted || e instanceof ClusterEvent.ClusterPolicyUpserted) {
                model.render(); // renders in between, as batches do: sticky numbering must not go stale
            }
        }
        RenderedInterpreter maps = new RenderedInterpreter(model.render());
        ReferenceEvaluator evaluator = new ReferenceEvaluator(cluster);
        Set<IpAddress> addresses = new TreeSet<>(ClusterPolicyArbitraries.probeAddresses(cluster));
        OUTSIDE.forEach(ip -> addresses.add(IpAddress.parse(ip)));
        for (IpAddress src : addresses) {
            for (IpAddress dst : addresses) {
                if (src.equals(dst) || src.v6() != dst.v6()) {
                    continue;
                }
                for (int port : PORTS) {
                    for (Protocol protocol : Protocol.values()) {
                        Verdict v = evaluator.allowed(Endpoint.external(src), Endpoint.external(dst), port, protocol);
                        assertThat(maps.allowed(src, dst, protocol.ipProtocolNumber(), port)).as(v.explain()).isEqualTo(v.allowed());
                    }
                }
            }
        }
    }
}
