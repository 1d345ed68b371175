package io.npmagent.dataplane.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.desired.CanonicalState;
import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.desired.DesiredState;
import io.npmagent.dataplane.desired.DesiredStateInterpreter;
import io.npmagent.dataplane.desired.DesiredStateInterpreter.Outcome;
import io.npmagent.dataplane.eval.Decision;
import io.npmagent.dataplane.eval.Endpoint;
import io.npmagent.dataplane.eval.ReferenceEvaluator;
import io.npmagent.dataplane.eval.Verdict;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.Protocol;
import java.util.List;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.statistics.Statistics;

/**
 * The compiler against the reference evaluator, on random clusters built event by event, NetworkPolicies
 * and ClusterNetworkPolicies (and the Nodes their peers name) together.
 *
 * <p>For every prefix of a random event sequence:
 * <ol>
 *   <li>the deltas the compiler emitted, applied one after another to an empty state, give exactly the
 *       compiler's own state, and that state has no broken references;</li>
 *   <li>that state equals (identity numbers aside) the state compiled from scratch from the cluster
 *       snapshot: incremental compilation has no memory of the path;</li>
 * </ol>
 * and at the end, for every pair of addresses (pods' and outside ones) on every probe port and protocol,
 * the state read back by {@link DesiredStateInterpreter} gives the evaluator's verdict: for the whole
 * connection when every pod is local, and per side when only one node's pods are.
 */
class CompilerDifferentialPropertyTest {

    @Provide
    Arbitrary<List<ClusterEvent>> events() {
        return ClusterPolicyArbitraries.eventsOfBothKinds();
    }

    @Property(tries = 600)
    void compilingEventByEventAgreesWithFromScratchAndWithTheEvaluator(@ForAll("events") List<ClusterEvent> events) {
        PolicyCompiler everyPodLocal = new PolicyCompiler(null);
        PolicyCompiler nodeOne = new PolicyCompiler("node-1");
        DesiredState followed = DesiredState.EMPTY;
        ClusterState cluster = ClusterState.EMPTY;
        for (ClusterEvent event : events) {
            cluster = cluster.apply(event);
            followed = followed.apply(everyPodLocal.apply(event).delta());
            nodeOne.apply(event);

            DesiredState own = everyPodLocal.snapshot();
            assertThat(followed).as("deltas replayed after %s", event).isEqualTo(own);
            assertThat(own.inconsistencies()).as("broken references after %s", event).isEmpty();
            assertThat(CanonicalState.of(own))
                    .as("incremental vs from scratch after %s", event)
                    .isEqualTo(CanonicalState.of(PolicyCompiler.compile(cluster, null)));
        }
        assertThat(CanonicalState.of(nodeOne.snapshot()))
                .isEqualTo(CanonicalState.of(PolicyCompiler.compile(cluster, "node-1")));

        ReferenceEvaluator evaluator = new ReferenceEvaluator(cluster);
        DesiredStateInterpreter whole = new DesiredStateInterpreter(everyPodLocal.snapshot());
        DesiredStateInterpreter oneNode = new DesiredStateInterpreter(nodeOne.snapshot());
        int denied = 0;
        int byTier = 0;
        int probes = 0;
        for (IpAddress src : addresses(cluster)) {
            for (IpAddress dst : addresses(cluster)) {
                if (src.equals(dst) || src.v6() != dst.v6()) {
                    continue;
                }
                for (int port : ClusterArbitraries.PROBE_PORTS) {
                    for (Protocol protocol : Protocol.values()) {
                        Verdict v = evaluator.allowed(Endpoint.external(src), Endpoint.external(dst), port, protocol);
                        assertThat(whole.allowed(src, dst, port, protocol))
                                .as("%s, desired state:%n%s", v.explain(), everyPodLocal.snapshot().dump())
                                .isEqualTo(v.allowed());
                        checkSide(oneNode, v, v.egress(), src, dst, port, protocol, cluster);
                        checkSide(oneNode, v, v.ingress(), src, dst, port, protocol, cluster);
                        denied += v.allowed() ? 0 : 1;
                        byTier += v.egress().decision() instanceof Decision.ByClusterRule
                                || v.ingress().decision() instanceof Decision.ByClusterRule ? 1 : 0;
                        probes++;
                    }
                }
            }
        }
        Statistics.label("share of probes a ClusterNetworkPolicy rule decided")
                .collect(probes == 0 ? "no probes" : byTier == 0 ? "none" : byTier * 2 < probes ? "some" : "most");
        Statistics.label("share of probes denied").collect(probes == 0 ? "no probes" : denied == 0 ? "none" : denied * 2 < probes ? "some" : "most");
    }

    private static void checkSide(
            DesiredStateInterpreter interpreter, Verdict v, Verdict.Side side,
            IpAddress src, IpAddress dst, int port, Protocol protocol, ClusterState cluster) {
        Outcome outcome = interpreter.side(side.direction(), src, dst, port, protocol);
        boolean local = side.pod() != null
                && cluster.pod(side.pod()).map(Pod::nodeName).filter("node-1"::equals).isPresent();
        Outcome expected = !local ? Outcome.NOT_LOCAL : side.allowed() ? Outcome.ALLOW : Outcome.DENY;
        assertThat(outcome).as("%s side on node-1: %s", side.direction(), v.explain()).isEqualTo(expected);
    }

    @Property(tries = 300)
    void loadingAWholeStateAtOnceGivesTheWholeStateAsAdditions(@ForAll("events") List<ClusterEvent> events) {
        PolicyCompiler eventByEvent = new PolicyCompiler("node-1");
        events.forEach(eventByEvent::apply);
        PolicyCompiler atOnce = new PolicyCompiler("node-1");

        assertThat(atOnce.load(events)).isEqualTo(DesiredDelta.of(eventByEvent.snapshot()));
        assertThat(atOnce.snapshot()).isEqualTo(eventByEvent.snapshot());
        assertThat(atOnce.errors()).isEqualTo(eventByEvent.errors());
        assertThat(atOnce.apply(new ClusterEvent.NamespaceDeleted("never-seen-namespace")).delta().isEmpty())
                .as("nothing left over: the next event's delta is only its own").isTrue();
    }

    @Property(tries = 300)
    void diffingTwoSnapshotsGivesEventsThatTurnOneIntoTheOther(
            @ForAll("events") List<ClusterEvent> first, @ForAll("events") List<ClusterEvent> second) {
        ClusterState a = ClusterState.EMPTY.applyAll(first);
        ClusterState b = ClusterState.EMPTY.applyAll(second);
        assertThat(a.applyAll(a.diff(b))).isEqualTo(b);
        assertThat(b.diff(b)).isEmpty();

        PolicyCompiler compiler = new PolicyCompiler(null);
        a.asEvents().forEach(compiler::apply);
        a.diff(b).forEach(compiler::apply);
        assertThat(CanonicalState.of(compiler.snapshot())).isEqualTo(CanonicalState.of(PolicyCompiler.compile(b, null)));
    }

    /** Every address a pod or node has, plus a few nothing has. */
    private static Set<IpAddress> addresses(ClusterState cluster) {
        return ClusterPolicyArbitraries.probeAddresses(cluster);
    }
}
