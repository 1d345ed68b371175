package io.npmagent.iptables;

import io.npmagent.dataplane.desired.StateDiff;
import static io.npmagent.dataplane.model.PolicyFixtures.labels;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static io.npmagent.dataplane.model.PolicyFixtures.peers;
import static io.npmagent.dataplane.model.PolicyFixtures.pods;
import static io.npmagent.dataplane.model.PolicyFixtures.policy;
import static io.npmagent.dataplane.model.PolicyFixtures.port;
import static io.npmagent.dataplane.model.PolicyFixtures.ports;
import static io.npmagent.dataplane.model.PolicyFixtures.rule;
import static io.npmagent.iptables.TierOverlay.both;
import static io.npmagent.iptables.TierOverlay.hosts;
import static io.npmagent.iptables.TierOverlay.on;
import static io.npmagent.iptables.TierOverlay.tcp;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.backend.Backend;
import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.desired.CompiledClusterRule;
import io.npmagent.dataplane.desired.DesiredState;
import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.desired.TierPolicies;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.model.Selector;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.npmagent.dataplane.tier.RuleAction;
import io.npmagent.harness.node.PodNetwork;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * ClusterNetworkPolicy tiers with real packets, the desired state built by hand ({@link TierOverlay}) over
 * the compiler's pods and NetworkPolicies: the steps of the harness's {@code PacketScenarios
 * .tiersDecideAroundNetworkPolicy}, plus what the compiler never emits (a pod naming a policy the backend
 * does not hold, which must fail closed) and a check that a Deny is silent. Pods a, b, c in namespace x.
 */
public final class TierScenario {
    private static final List<String> NONE = List.of();

    private final PodNetwork net;
    private final Backend backend;
    private final PolicyCompiler compiler = new PolicyCompiler(null);
    private final TierOverlay overlay = new TierOverlay();
    private DesiredState applied = DesiredState.EMPTY;

    private TierScenario(PodNetwork net, Backend backend) {
        this.net = net;
        this.backend = backend;
        compiler.apply(new ClusterEvent.NamespaceUpserted(new Namespace("x", labels())));
        for (String name : new String[] {"a", "b", "c"}) {
            compiler.apply(new ClusterEvent.PodUpserted(Pod.builder("x", name).labels(labels("app", name))
                    .ip(net.address(name, false)).ip(net.address(name, true)).port("probe", PodNetwork.PORT, Protocol.TCP).build()));
        }
        sync();
    }

    private static PodKey pod(String name) {
        return new PodKey("x", name);
    }

    /** Pod a by its addresses (a {@code networks} peer), c by a selector across namespaces. */
    private List<PeerSetKey> a() {
        return hosts(net.address("a", false), net.address("a", true));
    }

    private static final PeerSetKey.SelectorPeers C = PeerSetKey.SelectorPeers.acrossNamespaces(Selector.ALL,
            new Selector(new TreeMap<>(Map.of("app", "c")), List.of()));

    private static CompiledClusterRule r(RuleAction action, List<PeerSetKey> peers) {
        return TierOverlay.rule(0, action, peers, List.of());
    }

    public static void tiersDecideAroundNetworkPolicy(PodNetwork net, Backend backend) {
        TierScenario s = new TierScenario(net, backend);
        s.overlay.members(C, pod("c"));
        s.expectBlocked("no policy");

        s.overlay.policy("baseline-deny-b", List.of(r(RuleAction.DENY, List.of(s.a().get(0), s.a().get(1), C))), List.of())
                .tiers(pod("b"), on(Direction.INGRESS, NONE, List.of("baseline-deny-b")));
        s.sync();
        s.expectBlocked("Baseline denies b's ingress", "a->b", "c->b");
        s.expectSilent("a", "b");

        s.compiler.apply(new ClusterEvent.PolicyUpserted(policy("x", "a-to-b").select(match("app", "b"))
                .ingress(rule(peers(pods(match("app", "a"))), ports(port("TCP", PodNetwork.PORT)))).build()));
        s.sync();
        s.expectBlocked("a NetworkPolicy isolating b decides instead of Baseline", "c->b");

        s.overlay.policy("admin-deny-a", List.of(r(RuleAction.DENY, s.a())), List.of())
                .tiers(pod("b"), on(Direction.INGRESS, List.of("admin-deny-a"), List.of("baseline-deny-b")));
        s.sync();
        s.expectBlocked("an Admin Deny overrides the NetworkPolicy's allow", "a->b", "c->b");
        s.expectSilent("a", "b");

        s.overlay.policy("admin-pass-a", List.of(r(RuleAction.PASS, s.a())), List.of())
                .tiers(pod("b"), on(Direction.INGRESS, List.of("admin-pass-a", "admin-deny-a"), List.of("baseline-deny-b")));
        s.sync();
        s.expectBlocked("an Admin Pass tried first skips the Admin Deny: NetworkPolicy decides", "c->b");

        s.overlay.tiers(pod("b"), on(Direction.INGRESS, List.of("admin-deny-a", "admin-pass-a"), List.of("baseline-deny-b")));
        s.sync();
        s.expectBlocked("the Deny's priority edited to come first", "a->b", "c->b");

        s.overlay.policy("admin-accept-c", List.of(TierOverlay.rule(0, RuleAction.ACCEPT, List.of(C), tcp(PodNetwork.PORT))), List.of())
                .tiers(pod("b"), on(Direction.INGRESS, List.of("admin-accept-c", "admin-deny-a", "admin-pass-a"), List.of("baseline-deny-b")));
        s.sync();
        s.expectBlocked("an Admin Accept overrides the NetworkPolicy's isolation", "a->b");

        s.overlay.policy("pass-c-to-a", List.of(r(RuleAction.PASS, List.of(C))), List.of())
                .policy("baseline-deny-c-to-a", List.of(r(RuleAction.DENY, List.of(C))), List.of())
                .tiers(pod("a"), on(Direction.INGRESS, List.of("pass-c-to-a"), List.of("baseline-deny-c-to-a")));
        s.sync();
        s.expectBlocked("a Pass where no NetworkPolicy isolates goes on to Baseline", "a->b", "c->a");

        s.overlay.policy("a-not-to-c", List.of(), List.of(r(RuleAction.DENY, hosts(net.address("c", false), net.address("c", true)))))
                .tiers(pod("a"), both(List.of("pass-c-to-a"), List.of("a-not-to-c"), List.of("baseline-deny-c-to-a"), NONE));
        s.sync();
        s.expectBlocked("an egress networks peer matches a pod's addresses", "a->b", "c->a", "a->c");
        s.expectSilent("a", "c");

        // What the compiler never emits: c lists a policy the backend does not hold (its part refused, say).
        s.overlay.tiers(pod("c"), on(Direction.INGRESS, List.of("not-held"), NONE));
        s.sync();
        s.expectBlocked("a policy not held fails closed", "a->b", "c->a", "a->c", "b->c");
        s.overlay.policy("not-held", List.of(r(RuleAction.PASS, List.of())), List.of());
        s.sync();
        s.expectBlocked("once it lands, its Pass lets everything on", "a->b", "c->a", "a->c");

        s.compiler.apply(new ClusterEvent.PolicyDeleted(new PolicyKey("x", "a-to-b")));
        for (String name : new String[] {"baseline-deny-b", "admin-deny-a", "admin-pass-a", "admin-accept-c", "pass-c-to-a",
                "baseline-deny-c-to-a", "a-not-to-c", "not-held"}) {
            s.overlay.remove(name);
        }
        for (String name : new String[] {"a", "b", "c"}) {
            s.overlay.tiers(pod(name), TierPolicies.NONE);
        }
        s.sync();
        s.expectBlocked("every policy removed");
        assertThat(backend.reconcile()).as("nothing to repair").isZero();
    }

    /** Applies the difference between what the backend holds and the compiler's state with the overlay, as one batch. */
    private void sync() {
        DesiredState next = overlay.over(compiler.snapshot());
        assertThat(next.inconsistencies()).as("the hand-built state").allMatch(p -> p.contains("missing ClusterNetworkPolicy"));
        backend.apply(new Batch(StateDiff.between(applied, next)));
        applied = next;
    }

    /** Pairs (both families) that must not connect; every other pair must. */
    private void expectBlocked(String step, String... blocked) {
        Set<String> denied = Set.of(blocked);
        Map<String, Boolean> expected = new TreeMap<>();
        Map<String, Boolean> actual = new TreeMap<>();
        net.probeAll().forEach((pair, connected) -> {
            expected.put(pair.toString(), !denied.contains(pair.from() + "->" + pair.to()));
            actual.put(pair.toString(), connected);
        });
        assertThat(actual).as("%s: TCP connects through the node", step).isEqualTo(expected);
    }

    /** A denied connect is dropped, not refused: it times out ({@code timeout}'s 124) rather than failing at once (bash's 1). */
    private void expectSilent(String from, String to) {
        var r = net.pod(from).run("timeout", "2", "bash", "-c", "</dev/tcp/" + net.address(to, false) + "/" + PodNetwork.PORT);
        assertThat(r.exitCode()).as("%s -> %s is dropped silently (timed out, not refused)", from, to).isEqualTo(124);
    }
}
