package io.npmagent.bpf;

import io.npmagent.dataplane.desired.StateDiff;
import static io.npmagent.bpf.model.TierStates.cidr;
import static io.npmagent.bpf.model.TierStates.id;
import static io.npmagent.bpf.model.TierStates.identity;
import static io.npmagent.bpf.model.TierStates.selector;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.bpf.model.TierStates;
import io.npmagent.bpf.testing.BpfFs;
import io.npmagent.dataplane.backend.Backend;
import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.bandwidth.BandwidthLimits;
import io.npmagent.dataplane.bandwidth.BandwidthSettings;
import io.npmagent.dataplane.desired.CompiledClusterPolicy;
import io.npmagent.dataplane.desired.CompiledClusterRule;
import io.npmagent.dataplane.desired.CompiledPolicy;
import io.npmagent.dataplane.desired.CompiledRule;
import io.npmagent.dataplane.desired.DesiredState;
import io.npmagent.dataplane.desired.Identity;
import io.npmagent.dataplane.desired.IdentityId;
import io.npmagent.dataplane.desired.LocalPod;
import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.desired.PortMatch;
import io.npmagent.dataplane.desired.TierPolicies;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.tier.RuleAction;
import io.npmagent.harness.node.PodNetwork;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * ClusterNetworkPolicy tiers with real TCP between pod namespaces, from desired states built by hand (the
 * rows the compiler will emit), each applied as the delta from the one before: Admin around
 * NetworkPolicy around Baseline, Pass, a priority edit (a new order in a pod's list), a networks peer
 * matching pods' addresses, a ClusterNetworkPolicy the backend does not hold (fail closed), and egress
 * through a ClusterIP judged at the forward hook after kube-proxy's DNAT. Every step's expectation is
 * also checked against the walk by address ({@link TierStates#allowed}).
 */
class TierPacketKernelTest {
    private static final PolicyKey B_ADMITS_A = new PolicyKey("x", "b-admits-a");
    private static final PeerSetKey SET_A = selector("a");
    private static final PeerSetKey SET_C = selector("c");
    private static final PeerSetKey SET_AC = selector("ac");
    private static final PortMatch PORT = PortMatch.PortRange.single(Protocol.TCP, PodNetwork.PORT);
    private static final List<String> PODS = List.of("a", "b", "c");

    @RegisterExtension
    final BpfFs fs = new BpfFs();
    private PodNetwork net;
    private Backend backend;
    private DesiredState state = DesiredState.EMPTY;

    @BeforeEach
    void network() {
        KernelTestSupport.require("ip", "python3");
        net = PodNetwork.create("a", "b", "c");
        backend = new BpfBackend(fs.root().resolve("npm"), net.node().name(), net.node().runner(), BandwidthSettings.DEFAULTS,
                new Metrics(new PrometheusRegistry()));
    }

    @AfterEach
    void teardown() {
        if (backend != null) {
            backend.close();
        }
        if (net != null) {
            net.close();
        }
    }

    private static CompiledClusterRule rule(RuleAction action, PeerSetKey... peers) {
        return new CompiledClusterRule(0, null, action, false, List.of(peers), true, List.of());
    }

    private static CompiledClusterPolicy ingress(String name, CompiledClusterRule rule) {
        return new CompiledClusterPolicy(name, List.of(rule), List.of());
    }

    private static CompiledClusterPolicy egress(String name, CompiledClusterRule rule) {
        return new CompiledClusterPolicy(name, List.of(), List.of(rule));
    }

    private static TierPolicies admin(Direction d, String... names) {
        return d == Direction.INGRESS ? new TierPolicies(List.of(names), List.of(), List.of(), List.of())
                : new TierPolicies(List.of(), List.of(names), List.of(), List.of());
    }

    private static TierPolicies baselineIngress(String... names) {
        return new TierPolicies(List.of(), List.of(), List.of(names), List.of());
    }

    /** The node's state with these tiers per pod, b isolated by a NetworkPolicy admitting a or not, these ClusterNetworkPolicies held. */
    private void apply(Map<String, TierPolicies> tiers, boolean bIsolated, CompiledClusterPolicy... held) {
        TreeMap<IdentityId, Identity> ids = new TreeMap<>();
        TreeMap<IpAddress, IdentityId> addresses = new TreeMap<>();
        TreeMap<PodKey, LocalPod> pods = new TreeMap<>();
        for (int i = 0; i < PODS.size(); i++) {
            String name = PODS.get(i);
            ids.put(id(i), identity(i, Map.of()));
            List<IpAddress> ips = List.of(net.address(name, false), net.address(name, true));
            for (IpAddress ip : ips) {
                addresses.put(ip, id(i));
            }
            PodKey key = new PodKey("x", name);
            pods.put(key, new LocalPod(key, ips, id(i), name.equals("b") && bIsolated ? List.of(B_ADMITS_A) : List.of(), List.of(),
                    BandwidthLimits.NONE, null, tiers.getOrDefault(name, TierPolicies.NONE)));
        }
        TreeMap<PeerSetKey, SortedSet<IdentityId>> sets = new TreeMap<>();
        sets.put(SET_A, new TreeSet<>(Set.of(id(0))));
        sets.put(SET_C, new TreeSet<>(Set.of(id(2))));
        sets.put(SET_AC, new TreeSet<>(Set.of(id(0), id(2))));
        TreeMap<PolicyKey, CompiledPolicy> policies = new TreeMap<>();
        if (bIsolated) {
            policies.put(B_ADMITS_A, new CompiledPolicy(B_ADMITS_A, EnumSet.of(Direction.INGRESS),
                    List.of(new CompiledRule(0, false, List.of(SET_A), false, List.of(PORT))), List.of()));
        }
        TreeMap<String, CompiledClusterPolicy> cluster = new TreeMap<>();
        for (CompiledClusterPolicy p : held) {
            cluster.put(p.name(), p);
            p.peerSets().forEach(k -> sets.putIfAbsent(k, new TreeSet<>()));
        }
        DesiredState next = new DesiredState(ids, addresses, sets, policies, cluster, pods);
        backend.apply(new Batch(StateDiff.between(state, next)));
        state = next;
    }

    /** Pairs (both families) that must not connect; every other pair must. The walk by address agrees. */
    private void expectBlocked(String step, String... blocked) {
        Set<String> denied = Set.of(blocked);
        Map<String, Boolean> expected = new TreeMap<>();
        Map<String, Boolean> reference = new TreeMap<>();
        Map<String, Boolean> actual = new TreeMap<>();
        net.probeAll().forEach((pair, connected) -> {
            expected.put(pair.toString(), !denied.contains(pair.from() + "->" + pair.to()));
            reference.put(pair.toString(), TierStates.allowed(state, net.address(pair.from(), pair.v6()), net.address(pair.to(), pair.v6()),
                    Protocol.TCP, PodNetwork.PORT));
            actual.put(pair.toString(), connected);
        });
        assertThat(reference).as("%s: the walk by address says what the test expects", step).isEqualTo(expected);
        assertThat(actual).as("%s: TCP connects through the node", step).isEqualTo(expected);
    }

    @Test
    void tiersDecideAroundNetworkPolicy() {
        CompiledClusterPolicy baselineDenyB = ingress("baseline-deny-b", rule(RuleAction.DENY, SET_AC));
        apply(Map.of("b", baselineIngress("baseline-deny-b")), false, baselineDenyB);
        expectBlocked("Baseline denies b's ingress", "a->b", "c->b");

        apply(Map.of("b", baselineIngress("baseline-deny-b")), true, baselineDenyB);
        expectBlocked("a NetworkPolicy isolating b decides instead of Baseline", "c->b");

        CompiledClusterPolicy denyA = ingress("admin-deny-a", rule(RuleAction.DENY, SET_A));
        apply(Map.of("b", new TierPolicies(List.of("admin-deny-a"), List.of(), List.of("baseline-deny-b"), List.of())), true,
                baselineDenyB, denyA);
        expectBlocked("an Admin Deny overrides the NetworkPolicy's allow", "a->b", "c->b");

        CompiledClusterPolicy passA = ingress("admin-pass-a", rule(RuleAction.PASS, SET_A));
        apply(Map.of("b", admin(Direction.INGRESS, "admin-pass-a", "admin-deny-a")), true, denyA, passA);
        expectBlocked("an Admin Pass tried first skips the Admin Deny: NetworkPolicy decides", "c->b");

        apply(Map.of("b", admin(Direction.INGRESS, "admin-deny-a", "admin-pass-a")), true, denyA, passA);
        expectBlocked("the Deny's priority edited to come first", "a->b", "c->b");

        CompiledClusterPolicy acceptC = ingress("admin-accept-c",
                new CompiledClusterRule(0, null, RuleAction.ACCEPT, false, List.of(SET_C), false, List.of(PORT)));
        apply(Map.of("b", admin(Direction.INGRESS, "admin-accept-c", "admin-deny-a", "admin-pass-a")), true, denyA, passA, acceptC);
        expectBlocked("an Admin Accept overrides the NetworkPolicy's isolation", "a->b");

        PeerSetKey c4 = cidr(net.address("c", false) + "/32");
        PeerSetKey c6 = cidr(net.address("c", true) + "/128");
        CompiledClusterPolicy notToC = egress("a-not-to-c", rule(RuleAction.DENY, c4, c6));
        apply(Map.of("a", admin(Direction.EGRESS, "a-not-to-c")), false, notToC);
        expectBlocked("an egress networks peer matches a pod's addresses", "a->c");

        apply(Map.of("a", admin(Direction.EGRESS, "ghost", "a-not-to-c")), false, notToC);
        expectBlocked("a ClusterNetworkPolicy the backend does not hold denies what reaches it", "a->b", "a->c");

        apply(Map.of(), false);
        expectBlocked("every policy removed");
        assertThat(backend.reconcile()).as("nothing to repair").isZero();
    }

    /**
     * Egress through a ClusterIP (kube-proxy's DNAT to b): at tc the destination is no pod, so the forward
     * hook judges it on b, after DNAT, by the same verdicts: a Deny of b's addresses blocks a through the
     * Service; a Deny of c's alone leaves a miss, which the walk allows.
     */
    @Test
    void serviceTrafficMeetsTiersOnTheBackend() {
        KernelTestSupport.require("iptables", "ip6tables");
        IpAddress[] service = {IpAddress.parse("10.96.0.50"), IpAddress.parse("fd00:10:96::50")};
        for (int i = 0; i < 2; i++) {
            net.node().must(i == 0 ? "iptables" : "ip6tables", "-t", "nat", "-A", "PREROUTING", "-d", service[i].toString(),
                    "-p", "tcp", "--dport", Integer.toString(PodNetwork.PORT), "-j", "DNAT", "--to-destination",
                    (i == 0 ? net.address("b", false).toString() : "[" + net.address("b", true) + "]") + ":" + PodNetwork.PORT);
        }
        try {
            CompiledClusterPolicy notToB = egress("a-not-to-b", rule(RuleAction.DENY, cidr(net.address("b", false) + "/32"),
                    cidr(net.address("b", true) + "/128")));
            CompiledClusterPolicy notToC = egress("a-not-to-c", rule(RuleAction.DENY, SET_C));
            apply(Map.of("a", admin(Direction.EGRESS, "a-not-to-c")), false, notToB, notToC);
            for (IpAddress s : service) {
                assertThat(net.connectsTo("a", s)).as("a -> %s: b is no Deny's peer", s).isTrue();
            }
            apply(Map.of("a", admin(Direction.EGRESS, "a-not-to-b", "a-not-to-c")), false, notToB, notToC);
            for (IpAddress s : service) {
                assertThat(net.connectsTo("a", s)).as("a -> %s: denied on b, after DNAT", s).isFalse();
                assertThat(net.connectsTo("c", s)).as("c -> %s: c's egress is open", s).isTrue();
            }
            apply(Map.of("b", admin(Direction.INGRESS, "b-not-from-c")), false,
                    ingress("b-not-from-c", rule(RuleAction.DENY, SET_C)));
            for (IpAddress s : service) {
                assertThat(net.connectsTo("a", s)).as("a -> %s: open again", s).isTrue();
                assertThat(net.connectsTo("c", s)).as("c -> %s: b's Admin denies c", s).isFalse();
            }
        } finally {
            for (int i = 0; i < 2; i++) {
                net.node().run(i == 0 ? "iptables" : "ip6tables", "-t", "nat", "-F", "PREROUTING");
            }
        }
    }

    /**
     * kube-proxy with {@code --masquerade-all}: at b's interface every Service connection comes from the
     * node's address, which tc always admits; the forward hook judges the first packet on its source before
     * SNAT, by b's tier verdicts: an Admin Deny of a blocks a through the Service, c (a miss, allowed) passes.
     */
    @Test
    void masqueradedServiceTrafficMeetsTiersOnItsSource() {
        KernelTestSupport.require("iptables", "ip6tables");
        IpAddress[] service = {IpAddress.parse("10.96.0.52"), IpAddress.parse("fd00:10:96::52")};
        for (int i = 0; i < 2; i++) {
            String tool = i == 0 ? "iptables" : "ip6tables";
            net.node().must(tool, "-t", "nat", "-A", "PREROUTING", "-d", service[i].toString(), "-p", "tcp", "--dport",
                    Integer.toString(PodNetwork.PORT), "-j", "DNAT", "--to-destination",
                    (i == 0 ? net.address("b", false).toString() : "[" + net.address("b", true) + "]") + ":" + PodNetwork.PORT);
            net.node().must(tool, "-t", "nat", "-A", "POSTROUTING", "-m", "conntrack", "--ctstate", "DNAT", "-j", "MASQUERADE");
        }
        try {
            apply(Map.of("b", admin(Direction.INGRESS, "b-not-from-a")), false, ingress("b-not-from-a", rule(RuleAction.DENY, SET_A)));
            for (IpAddress s : service) {
                assertThat(net.connectsTo("a", s)).as("a -> %s: denied on its source, though the node's address reaches b", s).isFalse();
                assertThat(net.connectsTo("c", s)).as("c -> %s: no rule names c, a miss is allowed", s).isTrue();
            }
            apply(Map.of(), false);
            for (IpAddress s : service) {
                assertThat(net.connectsTo("a", s)).as("a -> %s: policy removed", s).isTrue();
            }
        } finally {
            for (String tool : new String[] {"iptables", "ip6tables"}) {
                net.node().run(tool, "-t", "nat", "-F", "PREROUTING");
                net.node().run(tool, "-t", "nat", "-F", "POSTROUTING");
            }
        }
    }
}
