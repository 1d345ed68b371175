package io.npmagent.bpf.model;

import io.npmagent.dataplane.desired.StateDiff;
import static io.npmagent.bpf.model.TierStates.HTTP;
import static io.npmagent.bpf.model.TierStates.PODS;
import static io.npmagent.bpf.model.TierStates.cidr;
import static io.npmagent.bpf.model.TierStates.id;
import static io.npmagent.bpf.model.TierStates.identity;
import static io.npmagent.bpf.model.TierStates.selector;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.bpf.maps.EndpointMap.Judged;
import io.npmagent.bpf.maps.PolicyMap;
import io.npmagent.dataplane.eval.ClusterRuleRef;
import io.npmagent.dataplane.flow.Attribution;
import io.npmagent.dataplane.desired.CompiledClusterPolicy;
import io.npmagent.dataplane.desired.CompiledClusterRule;
import io.npmagent.dataplane.desired.CompiledPolicy;
import io.npmagent.dataplane.desired.CompiledRule;
import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.desired.DesiredState;
import io.npmagent.dataplane.desired.IdentityId;
import io.npmagent.dataplane.desired.LocalPod;
import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.desired.PortMatch;
import io.npmagent.dataplane.desired.TierPolicies;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.model.Tier;
import io.npmagent.dataplane.tier.RuleAction;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * What the model writes for pods ClusterNetworkPolicies select, case by case: b (10.0.0.2, local) is
 * the pod judged; a (10.0.0.1) is in set {@code A}, c (10.0.0.3) in none; d (10.0.0.4, identity 3)
 * serves {@code http} on 8080. Each case is read back as the programs read it and checked against the
 * walk by address ({@link TierStates#allowed}) as well as by the expected verdicts.
 */
class TierRenderTest {
    private static final IpAddress A = PODS[0];
    private static final IpAddress B = PODS[1];
    private static final IpAddress C = PODS[2];
    private static final IpAddress D = PODS[3];
    private static final PeerSetKey.SelectorPeers SET_A = selector("a");
    private static final PeerSetKey.CidrPeers NET_C = cidr("10.0.0.3/32");
    private static final PolicyKey NP = new PolicyKey("x", "np");
    private static final PortMatch TCP_80 = PortMatch.PortRange.single(Protocol.TCP, 80);

    private final BpfModel model = new BpfModel();
    private DesiredState state = DesiredState.EMPTY;

    private static CompiledClusterRule rule(RuleAction action, List<PeerSetKey> peers, PortMatch... ports) {
        return new CompiledClusterRule(0, null, action, peers.isEmpty(), peers, ports.length == 0, List.of(ports));
    }

    /** An Admin table's value: the verdict of the first ingress rule of {@code policy}, with the rule's number. */
    private int decided(RuleAction action, String policy) {
        return PolicyMap.packed(action == RuleAction.ACCEPT ? PolicyMap.ALLOW : PolicyMap.DENY,
                model.refs().ref(new Attribution.ByClusterRule(new ClusterRuleRef(Tier.ADMIN, policy, Direction.INGRESS, 0, null), action)));
    }

    private static CompiledClusterPolicy ingress(String name, CompiledClusterRule... rules) {
        return new CompiledClusterPolicy(name, List.of(rules), List.of());
    }

    private static CompiledClusterPolicy egress(String name, CompiledClusterRule... rules) {
        return new CompiledClusterPolicy(name, List.of(), List.of(rules));
    }

    private static TierPolicies admin(String... names) {
        return new TierPolicies(List.of(names), List.of(), List.of(), List.of());
    }

    /** b with these tiers; if {@code isolated}, NetworkPolicy {@code np} (admitting A on TCP 80) isolates its ingress. */
    private Rendered render(TierPolicies tiers, boolean isolated, CompiledClusterPolicy... policies) {
        TreeMap<IdentityId, io.npmagent.dataplane.desired.Identity> ids = new TreeMap<>();
        ids.put(id(0), identity(0, Map.of()));
        ids.put(id(1), identity(1, Map.of()));
        ids.put(id(2), identity(2, Map.of()));
        ids.put(id(3), identity(3, Map.of(HTTP, 8080)));
        TreeMap<IpAddress, IdentityId> addresses = new TreeMap<>(Map.of(A, id(0), B, id(1), C, id(2), D, id(3)));
        TreeMap<PeerSetKey, SortedSet<IdentityId>> sets = new TreeMap<>();
        sets.put(SET_A, new TreeSet<>(List.of(id(0))));
        sets.put(NET_C, new TreeSet<>());
        TreeMap<PolicyKey, CompiledPolicy> nps = new TreeMap<>();
        nps.put(NP, new CompiledPolicy(NP, EnumSet.of(Direction.INGRESS),
                List.of(new CompiledRule(0, false, List.of(SET_A), false, List.of(TCP_80))), List.of()));
        TreeMap<String, CompiledClusterPolicy> cnps = new TreeMap<>();
        for (CompiledClusterPolicy p : policies) {
            cnps.put(p.name(), p);
            p.peerSets().forEach(k -> sets.putIfAbsent(k, new TreeSet<>()));
        }
        LocalPod b = TierStates.pod(1, id(1), isolated ? List.of(NP) : List.of(), List.of(), tiers);
        DesiredState next = new DesiredState(ids, addresses, sets, nps, cnps, new TreeMap<>(Map.of(b.key(), b)));
        model.apply(state == DesiredState.EMPTY ? DesiredDelta.of(next) : StateDiff.between(state, next));
        state = next;
        Rendered r = model.render();
        TierRenderPropertyTest.check(state, r, "case");
        assertThat(new java.util.HashMap<>(r.policy())).as("incremental equals from scratch")
                .isEqualTo(new java.util.HashMap<>(model.renderFromScratch().policy()));
        return r;
    }

    private static boolean allowed(Rendered r, IpAddress from, IpAddress to, Protocol p, int port) {
        return new RenderedInterpreter(r).allowed(from, to, p.ipProtocolNumber(), port);
    }

    @Test
    void aPodNoClusterNetworkPolicySelectsRendersAsBeforeTiers() {
        Rendered r = render(TierPolicies.NONE, true);
        assertThat(r.endpoints().values()).singleElement().satisfies(ep -> {
            assertThat(ep.ingress()).isEqualTo(Judged.MISS_DENIED);
            assertThat(ep.egress()).isEqualTo(Judged.OPEN);
        });
        assertThat(r.policy().values()).as("allow entries only").containsOnly(PolicyMap.ALLOW);
        assertThat(r.policy().keySet()).as("A's class on TCP 80, nothing else")
                .containsExactly(new PolicyEntry(1, 0, id(0).value(), false, 6, 80, 16));
    }

    @Test
    void theFirstMatchingRuleDecidesAndAPriorityEditIsANewOrder() {
        CompiledClusterPolicy deny = ingress("deny-a", rule(RuleAction.DENY, List.of(SET_A)));
        CompiledClusterPolicy accept = ingress("accept-a", rule(RuleAction.ACCEPT, List.of(SET_A), TCP_80));
        Rendered r = render(admin("deny-a", "accept-a"), true, deny, accept);
        assertThat(allowed(r, A, B, Protocol.TCP, 80)).as("the Deny is tried first").isFalse();
        r = render(admin("accept-a", "deny-a"), true, deny, accept);
        assertThat(allowed(r, A, B, Protocol.TCP, 80)).as("the Accept tried first").isTrue();
        assertThat(allowed(r, A, B, Protocol.TCP, 81)).as("the Deny still decides the rest").isFalse();
        assertThat(allowed(r, C, B, Protocol.TCP, 80)).as("c: no rule, NetworkPolicy isolates").isFalse();
        r = render(admin("accept-a", "deny-a"), false, deny, accept);
        assertThat(allowed(r, C, B, Protocol.TCP, 80)).as("c: no rule, nothing isolates").isTrue();
        assertThat(r.endpoints().values()).singleElement().satisfies(ep -> assertThat(ep.ingress()).isEqualTo(Judged.MISS_ALLOWED));
        assertThat(r.policy().keySet()).as("only A's class has entries: ANY is the miss verdict")
                .allMatch(e -> e.identity() == id(0).value());
    }

    @Test
    void aPassSkipsTheRestOfAdminAndNetworkPolicyOrBaselineDecides() {
        CompiledClusterPolicy pass = ingress("pass-a", rule(RuleAction.PASS, List.of(SET_A)));
        CompiledClusterPolicy deny = ingress("deny-a", rule(RuleAction.DENY, List.of(SET_A)));
        CompiledClusterPolicy baselineDeny = ingress("baseline-deny", rule(RuleAction.DENY, List.of(SET_A)));
        TierPolicies tiers = new TierPolicies(List.of("pass-a", "deny-a"), List.of(), List.of("baseline-deny"), List.of());
        Rendered r = render(tiers, true, pass, deny, baselineDeny);
        assertThat(allowed(r, A, B, Protocol.TCP, 80)).as("passed to the NetworkPolicy, which admits").isTrue();
        assertThat(allowed(r, A, B, Protocol.TCP, 81)).as("passed to the NetworkPolicy, which does not").isFalse();
        r = render(tiers, false, pass, deny, baselineDeny);
        assertThat(allowed(r, A, B, Protocol.TCP, 80)).as("nothing isolates: Baseline decides").isFalse();
        assertThat(allowed(r, C, B, Protocol.TCP, 80)).as("c: allowed at the end").isTrue();
        TierPolicies baselinePass = new TierPolicies(List.of(), List.of(), List.of("pass-a", "baseline-deny"), List.of());
        r = render(baselinePass, false, pass, deny, baselineDeny);
        assertThat(allowed(r, A, B, Protocol.TCP, 80)).as("a Pass in Baseline skips to the end: allow").isTrue();
    }

    /** #39: what the programs judge carries the number of what decided: a rule, or the pod's isolation. */
    @Test
    void everyVerdictCarriesTheNumberOfWhatDecidedIt() {
        CompiledClusterPolicy denyA = ingress("deny-a", rule(RuleAction.DENY, List.of(SET_A), TCP_80));
        Rendered r = render(admin("deny-a"), true, denyA);
        Rendered.Endpoint ep = r.endpoints().values().iterator().next();
        int isolation = model.refs().ref(new Attribution.Isolation(Direction.INGRESS, List.of(NP)));
        assertThat(ep.isolation()).as("b's ingress default deny: every NetworkPolicy isolating it; egress: none")
                .isEqualTo(new io.npmagent.bpf.maps.EndpointMap.Isolation(isolation, 0));
        RenderedInterpreter read = new RenderedInterpreter(r);
        assertThat(read.judge(B, A, 0, 6, 80)).as("the Admin Deny, by its rule").isEqualTo(decided(RuleAction.DENY, "deny-a"));
        assertThat(read.judge(B, C, 0, 6, 80)).as("C: isolated, no rule admits it").isEqualTo(PolicyMap.packed(PolicyMap.DENY, isolation));
        assertThat(read.judge(B, A, 0, 6, 81)).as("A on 81: the Deny is silent there, NetworkPolicy has no rule either")
                .isEqualTo(PolicyMap.packed(PolicyMap.DENY, isolation));
        assertThat(model.refs().resolve(isolation)).contains(new Attribution.Isolation(Direction.INGRESS, List.of(NP)));
    }

    @Test
    void aClusterNetworkPolicyNotHeldDeniesWhatReachesItsPlace() {
        CompiledClusterPolicy accept = ingress("accept-a", rule(RuleAction.ACCEPT, List.of(SET_A), TCP_80));
        Rendered r = render(admin("accept-a", "ghost"), false, accept);
        assertThat(allowed(r, A, B, Protocol.TCP, 80)).as("accepted before the missing policy's place").isTrue();
        assertThat(allowed(r, A, B, Protocol.TCP, 81)).as("reaches it: denied").isFalse();
        assertThat(allowed(r, C, B, Protocol.UDP, 53)).as("any peer reaching it: denied").isFalse();
        Rendered.Endpoint ep = r.endpoints().values().iterator().next();
        assertThat(ep.ingress()).as("no NetworkPolicy isolates b").isEqualTo(Judged.MISS_ALLOWED);
        assertThat(r.policy()).as("the Admin table denies ANY wholly, at the missing policy's place")
                .containsEntry(new PolicyEntry(ep.tiers().admin(0), 0, BpfModel.ANY, true, 0, 0, 0),
                        PolicyMap.packed(PolicyMap.DENY, model.refs().ref(new Attribution.Unheld(Tier.ADMIN, "ghost"))));
        r = render(new TierPolicies(List.of(), List.of(), List.of("ghost"), List.of()), true);
        assertThat(allowed(r, A, B, Protocol.TCP, 80)).as("NetworkPolicy decides before a missing Baseline").isTrue();
        assertThat(allowed(r, C, B, Protocol.TCP, 80)).as("isolated").isFalse();
    }

    @Test
    void anIdentityHasEntriesWhereItsWalkDiffersFromAny() {
        CompiledClusterPolicy denyA = ingress("deny-a", rule(RuleAction.DENY, List.of(SET_A), TCP_80));
        CompiledClusterPolicy acceptAll = ingress("accept-all", rule(RuleAction.ACCEPT, List.of(cidr("10.0.0.0/8")),
                new PortMatch.PortRange(Protocol.TCP, 8000, 8100)));
        Rendered r = render(admin("deny-a", "accept-all"), true, denyA, acceptAll);
        assertThat(allowed(r, A, B, Protocol.TCP, 80)).as("denied by identity, though the NetworkPolicy admits A").isFalse();
        assertThat(allowed(r, C, B, Protocol.TCP, 8050)).as("by the network").isTrue();
        assertThat(allowed(r, IpAddress.parse("10.9.9.9"), B, Protocol.TCP, 8100)).as("an address that is no pod, by its atom").isTrue();
        assertThat(allowed(r, IpAddress.parse("192.168.0.1"), B, Protocol.TCP, 8100)).as("outside the network: the world").isFalse();
        int classOfA = r.ipcache().get(io.npmagent.dataplane.model.Cidr.host(A)).identity();
        int atom = r.ipcache().get(io.npmagent.dataplane.model.Cidr.parse("10.0.0.0/8")).identity();
        assertThat(r.ipcache().get(io.npmagent.dataplane.model.Cidr.host(A)).atom()).as("A's class falls back to its atom").isEqualTo(atom);
        int table = r.endpoints().values().iterator().next().tiers().admin(0);
        assertThat(table).as("b's ingress walks an Admin table").isGreaterThanOrEqualTo(BpfModel.TABLE_BASE);
        assertThat(r.policy()).as("8000-8100 as four aligned prefixes for the atom, which the classes in it fall back to")
                .containsEntry(new PolicyEntry(table, 0, atom, false, 6, 8000, 10), decided(RuleAction.ACCEPT, "accept-all"))
                .containsEntry(new PolicyEntry(table, 0, atom, false, 6, 8064, 11), decided(RuleAction.ACCEPT, "accept-all"))
                .containsEntry(new PolicyEntry(table, 0, atom, false, 6, 8096, 14), decided(RuleAction.ACCEPT, "accept-all"))
                .containsEntry(new PolicyEntry(table, 0, atom, false, 6, 8100, 16), decided(RuleAction.ACCEPT, "accept-all"))
                .doesNotContainKey(new PolicyEntry(table, 0, classOfA, false, 6, 8100, 16));
        int classOfC = r.ipcache().get(io.npmagent.dataplane.model.Cidr.host(C)).identity();
        assertThat(r.policy().keySet()).as("c: no selector names it, so it walks as its atom does: no entries")
                .noneMatch(e -> e.identity() == classOfC);
        assertThat(r.policy()).as("A on TCP 80: the Admin Deny, whatever NetworkPolicy says")
                .containsEntry(new PolicyEntry(table, 0, classOfA, false, 6, 80, 16), decided(RuleAction.DENY, "deny-a"))
                .as("and b's NetworkPolicy entry, which the Deny is tried before")
                .containsEntry(new PolicyEntry(1, 0, classOfA, false, 6, 80, 16), PolicyMap.ALLOW);
        Map<PolicyEntry, Integer> ofTable = new java.util.HashMap<>(r.policy());
        ofTable.keySet().removeIf(e -> e.endpoint() != table);
        r = render(admin("deny-a", "accept-all"), false, denyA, acceptAll);
        assertThat(r.endpoints().values().iterator().next().tiers().admin(0)).as("the same list: the same table").isEqualTo(table);
        assertThat(r.policy()).as("not isolated: the table stays; b's NetworkPolicy entries go").isEqualTo(ofTable);
    }

    @Test
    void theNodesOwnAddressesAreJudgedOnlyByClusterNetworkPolicyEgressRulesHoldingThem() {
        IpAddress node = IpAddress.parse("10.0.0.9");
        IpAddress nodeOutside = IpAddress.parse("192.168.0.9");
        model.nodeAddresses(java.util.Set.of(node, nodeOutside));
        CompiledClusterPolicy denyNet = egress("deny-net", rule(RuleAction.DENY, List.of(cidr("10.0.0.0/8")), TCP_80));
        Rendered r = render(new TierPolicies(List.of(), List.of("deny-net"), List.of(), List.of()), true, denyNet);
        assertThat(r.node()).as("the node in the network reads as its atom's node identity, the other as HOST")
                .containsEntry(io.npmagent.dataplane.model.Cidr.host(nodeOutside), BpfModel.HOST)
                .hasEntrySatisfying(io.npmagent.dataplane.model.Cidr.host(node), id -> assertThat(id).isGreaterThanOrEqualTo(BpfModel.NODE_BASE));
        assertThat(allowed(r, B, node, Protocol.TCP, 80)).as("an Admin Deny holding the node's address").isFalse();
        assertThat(allowed(r, B, node, Protocol.TCP, 81)).as("another port").isTrue();
        assertThat(allowed(r, B, IpAddress.parse("10.0.0.8"), Protocol.TCP, 80)).as("an address that is no pod nor node").isFalse();
        assertThat(allowed(r, B, nodeOutside, Protocol.TCP, 80)).as("the node's address outside the network").isTrue();
        assertThat(allowed(r, node, B, Protocol.TCP, 80)).as("the node to b, whose NetworkPolicy admits only A").isTrue();
        assertThat(allowed(r, C, B, Protocol.TCP, 80)).as("c to b: isolated").isFalse();

        CompiledClusterPolicy baselineDeny = egress("baseline-deny", rule(RuleAction.DENY, List.of(cidr("10.0.0.0/8"))));
        r = render(new TierPolicies(List.of(), List.of(), List.of(), List.of("baseline-deny")), false, baselineDeny);
        assertThat(allowed(r, B, node, Protocol.UDP, 53)).as("a Baseline Deny where no NetworkPolicy isolates b's egress").isFalse();
        assertThat(allowed(r, B, nodeOutside, Protocol.UDP, 53)).isTrue();

        model.nodeAddresses(java.util.Set.of(nodeOutside));
        r = model.render();
        assertThat(new RenderedInterpreter(r).allowed(B, node, Protocol.UDP.ipProtocolNumber(), 53))
                .as("no longer the node's: an address in the network like any").isFalse();
        assertThat(r.policy().keySet()).as("no entries left for a node identity").noneMatch(e -> e.identity() >= BpfModel.NODE_BASE
                && e.identity() < 0x20000000);
        assertThat(new java.util.HashMap<>(r.policy())).as("incremental equals from scratch")
                .isEqualTo(new java.util.HashMap<>(model.renderFromScratch().policy()));
    }

    @Test
    void namedPortsResolveOnTheDestination() {
        CompiledClusterPolicy egressHttp = egress("deny-http", rule(RuleAction.DENY, List.of(), HTTP));
        Rendered r = render(new TierPolicies(List.of(), List.of("deny-http"), List.of(), List.of()), false, egressHttp);
        assertThat(allowed(r, B, D, Protocol.TCP, 8080)).as("d serves http on 8080").isFalse();
        assertThat(allowed(r, B, D, Protocol.TCP, 80)).isTrue();
        assertThat(allowed(r, B, A, Protocol.TCP, 8080)).as("a serves no http").isTrue();
        assertThat(allowed(r, B, IpAddress.parse("192.168.0.1"), Protocol.TCP, 8080)).as("no pod: no named port").isTrue();
    }

    /**
     * #38: pods whose sides walk the same list share one tier table, its entries written once; a rule edit
     * redoes the table and no pod; the table goes with the last pod that walks it.
     */
    @Test
    void podsWalkingTheSameListShareOneTableWhichARuleEditRedoesAlone() {
        CompiledClusterPolicy deny80 = ingress("deny-a", rule(RuleAction.DENY, List.of(SET_A), TCP_80));
        DesiredState two = shared(deny80, admin("deny-a"), admin("deny-a"));
        model.apply(DesiredDelta.of(two));
        Rendered r = model.render();
        int table = r.endpoints().get(TierStates.pod(1, id(1), List.of(), List.of(), TierPolicies.NONE).key()).tiers().admin(0);
        assertThat(r.endpoints().values()).as("b and c, one Admin table").hasSize(2).allSatisfy(ep -> assertThat(ep.tiers().admin(0)).isEqualTo(table));
        int classOfA = r.ipcache().get(io.npmagent.dataplane.model.Cidr.host(A)).identity();
        assertThat(r.policy()).as("one entry for both pods: A's class denied on TCP 80")
                .containsExactly(Map.entry(new PolicyEntry(table, 0, classOfA, false, 6, 80, 16), decided(RuleAction.DENY, "deny-a")));
        assertThat(allowed(r, A, B, Protocol.TCP, 80)).isFalse();
        assertThat(allowed(r, A, C, Protocol.TCP, 80)).isFalse();
        assertThat(allowed(r, A, C, Protocol.TCP, 81)).isTrue();

        CompiledClusterPolicy deny81 = ingress("deny-a", rule(RuleAction.DENY, List.of(SET_A), PortMatch.PortRange.single(Protocol.TCP, 81)));
        DesiredState edited = shared(deny81, admin("deny-a"), admin("deny-a"));
        model.apply(StateDiff.between(two, edited));
        r = model.render();
        assertThat(r.changes().pods()).as("a rule edit redoes no pod").isEmpty();
        assertThat(r.changes().policy()).as("the table's entry for port 80 went, for 81 came")
                .containsExactlyInAnyOrder(new PolicyEntry(table, 0, classOfA, false, 6, 80, 16), new PolicyEntry(table, 0, classOfA, false, 6, 81, 16));
        assertThat(allowed(r, A, C, Protocol.TCP, 80)).isTrue();
        assertThat(allowed(r, A, C, Protocol.TCP, 81)).isFalse();

        DesiredState oneLeft = shared(deny81, admin("deny-a"), TierPolicies.NONE);
        model.apply(StateDiff.between(edited, oneLeft));
        r = model.render();
        assertThat(r.policy()).as("b still walks it").containsOnlyKeys(new PolicyEntry(table, 0, classOfA, false, 6, 81, 16));
        assertThat(allowed(r, A, C, Protocol.TCP, 81)).as("c no longer").isTrue();
        DesiredState none = shared(deny81, TierPolicies.NONE, TierPolicies.NONE);
        model.apply(StateDiff.between(oneLeft, none));
        r = model.render();
        assertThat(r.policy()).as("the table went with its last pod").isEmpty();
        assertThat(allowed(r, A, B, Protocol.TCP, 81)).isTrue();
    }

    /** Local pods b and c with these tiers, a (in set A) remote; {@code policy} held. */
    private static DesiredState shared(CompiledClusterPolicy policy, TierPolicies ofB, TierPolicies ofC) {
        TreeMap<IdentityId, io.npmagent.dataplane.desired.Identity> ids = new TreeMap<>();
        for (int i = 0; i < 3; i++) {
            ids.put(id(i), identity(i, Map.of()));
        }
        TreeMap<PeerSetKey, SortedSet<IdentityId>> sets = new TreeMap<>();
        sets.put(SET_A, new TreeSet<>(List.of(id(0))));
        LocalPod b = TierStates.pod(1, id(1), List.of(), List.of(), ofB);
        LocalPod c = TierStates.pod(2, id(2), List.of(), List.of(), ofC);
        return new DesiredState(ids, new TreeMap<>(Map.of(A, id(0), B, id(1), C, id(2))), sets, new TreeMap<>(),
                new TreeMap<>(Map.of(policy.name(), policy)), new TreeMap<>(Map.of(b.key(), b, c.key(), c)));
    }

    /**
     * #38: an egress Deny to a network holding many pods costs entries per atom, not per pod. The pods of
     * identities no selector names walk as their atom does, so they get no entries and coming into the
     * network touches none; a pod a selector names still gets its own verdict where it differs.
     */
    @Test
    void aNetworkPeerCostsEntriesPerAtomNotPerPod() {
        CompiledClusterPolicy denyNet = egress("deny-net",
                rule(RuleAction.ACCEPT, List.of(SET_A), PortMatch.PortRange.single(Protocol.TCP, 1500)),
                rule(RuleAction.DENY, List.of(cidr("10.0.0.0/16")), new PortMatch.PortRange(Protocol.TCP, 1000, 2000)));
        BpfModel few = new BpfModel();
        DesiredState fewPods = network(5, denyNet);
        few.apply(DesiredDelta.of(fewPods));
        int entries = few.render().policy().size();

        DesiredState manyPods = network(500, denyNet);
        few.apply(StateDiff.between(fewPods, manyPods));
        Rendered grown = few.render();
        assertThat(grown.changes().policy()).as("495 pods came into the network: no entry changed").isEmpty();
        assertThat(grown.policy()).hasSize(entries);

        BpfModel many = new BpfModel();
        many.apply(DesiredDelta.of(manyPods));
        Rendered r = many.render();
        assertThat(r.policy()).as("500 pods in the network cost what 5 do (class numbers depend on history)").hasSize(entries);
        int classOfA = r.ipcache().get(io.npmagent.dataplane.model.Cidr.host(A)).identity();
        int atom = r.ipcache().get(io.npmagent.dataplane.model.Cidr.parse("10.0.0.0/16")).identity();
        assertThat(r.policy().keySet()).as("entries for ANY, the atom and a's class alone")
                .allMatch(e -> e.identity() == BpfModel.ANY || e.identity() == atom || e.identity() == classOfA)
                .anyMatch(e -> e.identity() == classOfA);

        assertThat(allowed(r, B, A, Protocol.TCP, 1500)).as("a: accepted by its selector before the network's Deny").isTrue();
        assertThat(allowed(r, B, A, Protocol.TCP, 1600)).as("a: denied by the network").isFalse();
        assertThat(allowed(r, B, A, Protocol.TCP, 80)).isTrue();
        for (IpAddress other : List.of(member(0), member(250), member(499))) {
            assertThat(allowed(r, B, other, Protocol.TCP, 1500)).as("%s: by its atom", other).isFalse();
            assertThat(allowed(r, B, other, Protocol.TCP, 2000)).isFalse();
            assertThat(allowed(r, B, other, Protocol.TCP, 2001)).isTrue();
            assertThat(allowed(r, B, other, Protocol.UDP, 1500)).isTrue();
        }
        assertThat(allowed(r, B, IpAddress.parse("10.0.200.1"), Protocol.TCP, 1500)).as("no pod, in the network").isFalse();
        assertThat(allowed(r, B, IpAddress.parse("192.168.0.1"), Protocol.TCP, 1500)).as("outside the network").isTrue();
    }

    private static IpAddress member(int i) {
        return IpAddress.parse("10.0." + (1 + i / 250) + "." + (1 + i % 250));
    }

    /** b (egress walked by {@code policy}), a (in set A) and {@code n} pods of identities of their own, no selector names. */
    private static DesiredState network(int n, CompiledClusterPolicy policy) {
        TreeMap<IdentityId, io.npmagent.dataplane.desired.Identity> ids = new TreeMap<>();
        TreeMap<IpAddress, IdentityId> addresses = new TreeMap<>();
        ids.put(id(0), identity(0, Map.of()));
        ids.put(id(1), identity(1, Map.of()));
        addresses.put(A, id(0));
        addresses.put(B, id(1));
        for (int i = 0; i < n; i++) {
            ids.put(id(100 + i), identity(100 + i, Map.of()));
            addresses.put(member(i), id(100 + i));
        }
        TreeMap<PeerSetKey, SortedSet<IdentityId>> sets = new TreeMap<>();
        sets.put(SET_A, new TreeSet<>(List.of(id(0))));
        policy.peerSets().forEach(k -> sets.putIfAbsent(k, new TreeSet<>()));
        LocalPod b = TierStates.pod(1, id(1), List.of(), List.of(), new TierPolicies(List.of(), List.of(policy.name()), List.of(), List.of()));
        return new DesiredState(ids, addresses, sets, new TreeMap<>(), new TreeMap<>(Map.of(policy.name(), policy)),
                new TreeMap<>(Map.of(b.key(), b)));
    }
}
