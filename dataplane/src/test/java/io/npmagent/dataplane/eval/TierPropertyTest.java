package io.npmagent.dataplane.eval;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ClusterNetworkPolicy;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.FieldErrors;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.LabelSelector;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.ObjectRef;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.model.Selector;
import io.npmagent.dataplane.model.Tier;
import io.npmagent.dataplane.policy.ClusterPolicyArbitraries;
import io.npmagent.dataplane.policy.ClusterPolicyArbitraries.Breakage;
import io.npmagent.dataplane.tier.ClusterPolicyNormalizer;
import io.npmagent.dataplane.tier.RuleAction;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;

/**
 * The tier walk's laws, on random clusters (pods, namespaces, NetworkPolicies, nodes and
 * ClusterNetworkPolicies, some invalid), each checked on every probe: every pair of addresses (pods',
 * nodes' and outside ones) of one family, on every probe port and protocol.
 */
class TierPropertyTest {
    private static final int TRIES = 150;

    /** One probe's verdict in two clusters. */
    private interface ProbeCheck {
        void check(Verdict before, Verdict after);
    }

    private static void probeBoth(ClusterState before, ClusterState after, ProbeCheck check) {
        ReferenceEvaluator b = new ReferenceEvaluator(before);
        ReferenceEvaluator a = new ReferenceEvaluator(after);
        Set<IpAddress> addresses = ClusterPolicyArbitraries.probeAddresses(after);
        addresses.addAll(ClusterPolicyArbitraries.probeAddresses(before));
        for (IpAddress src : addresses) {
            for (IpAddress dst : addresses) {
                if (src.equals(dst) || src.v6() != dst.v6()) {
                    continue;
                }
                for (int port : ClusterPolicyArbitraries.PROBE_PORTS) {
                    for (Protocol protocol : Protocol.values()) {
                        check.check(b.allowed(Endpoint.external(src), Endpoint.external(dst), port, protocol),
                                a.allowed(Endpoint.external(src), Endpoint.external(dst), port, protocol));
                    }
                }
            }
        }
    }

    private static ClusterState with(ClusterState cluster, ClusterNetworkPolicy policy) {
        return cluster.apply(new ClusterEvent.ClusterPolicyUpserted(policy));
    }

    @Provide
    Arbitrary<ClusterState> clusters() {
        return ClusterPolicyArbitraries.cluster();
    }

    @Provide
    Arbitrary<ClusterState> networkPolicyClusters() {
        return ClusterPolicyArbitraries.baseEvents().map(ClusterState.EMPTY::applyAll);
    }

    /** Pass-only, and tried after every other Admin policy: priority 1000, and a name after theirs. */
    @Provide
    Arbitrary<ClusterNetworkPolicy> lastAdminPassOnly() {
        return ClusterPolicyArbitraries.passOnly("zz-pass-only", 1000, "Admin");
    }

    @Provide
    Arbitrary<ClusterNetworkPolicy> policyUnderTest() {
        return ClusterPolicyArbitraries.valid(List.of("p-under-test"), List.of("Admin", "Baseline"));
    }

    @Provide
    Arbitrary<Breakage> policyBreakages() {
        return ClusterPolicyArbitraries.policyBreakage();
    }

    @Provide
    Arbitrary<Breakage> ruleBreakages() {
        return ClusterPolicyArbitraries.ruleBreakage();
    }

    @Provide
    Arbitrary<String> namespaces() {
        return Arbitraries.of(ClusterPolicyArbitraries.NAMESPACES);
    }

    @Provide
    Arbitrary<LabelSelector> podSelectors() {
        return ClusterPolicyArbitraries.selector(List.of("app", "tier"));
    }

    @Property(tries = TRIES)
    void withoutClusterPoliciesEverySideIsDecidedByNetworkPolicyAsBefore(@ForAll("networkPolicyClusters") ClusterState cluster) {
        probeBoth(cluster, cluster, (v, same) -> {
            for (Verdict.Side side : List.of(v.egress(), v.ingress())) {
                boolean networkPolicyVerdict = !side.isolated() || !side.allowedBy().isEmpty();
                assertThat(side.allowed()).as(v.explain()).isEqualTo(networkPolicyVerdict);
                assertThat(side.passedBy()).isEmpty();
                assertThat(side.decision()).as(v.explain()).isEqualTo(
                        side.isolated() ? new Decision.ByNetworkPolicy(networkPolicyVerdict) : new Decision.ByDefault());
            }
        });
    }

    @Property(tries = TRIES)
    void anAdminPolicyThatOnlyPassesChangesNoDecisionWhenTriedLast(
            @ForAll("clusters") ClusterState cluster, @ForAll("lastAdminPassOnly") ClusterNetworkPolicy passOnly) {
        assertThat(ClusterPolicyNormalizer.normalize(passOnly).errors()).isEmpty();
        int[] passed = {0};
        probeBoth(cluster, with(cluster, passOnly), (before, after) -> {
            assertThat(after.egress().decision()).as("%s%nbefore: %s", after.explain(), before.explain())
                    .isEqualTo(before.egress().decision());
            assertThat(after.ingress().decision()).as("%s%nbefore: %s", after.explain(), before.explain())
                    .isEqualTo(before.ingress().decision());
            passed[0] += after.egress().passedBy().size() + after.ingress().passedBy().size()
                    - before.egress().passedBy().size() - before.ingress().passedBy().size();
        });
        Statistics.label("the pass-only policy passed something").collect(passed[0] > 0);
    }

    /**
     * Baseline policies (the random ones, and after them one that denies everything of every pod, so
     * that Baseline would decide wherever it is reached) against none at all.
     */
    @Property(tries = TRIES)
    void baselineNeverChangesASideThatNetworkPolicyIsolates(@ForAll("clusters") ClusterState cluster) {
        ClusterState withoutBaseline = cluster;
        for (ClusterNetworkPolicy p : cluster.clusterPolicies().values()) {
            if ("Baseline".equals(p.tier())) {
                withoutBaseline = withoutBaseline.apply(new ClusterEvent.ClusterPolicyDeleted(p.name()));
            }
        }
        ClusterState withBaseline = with(cluster, denyEverything("zz-baseline-deny-all", "Baseline", 1000, LabelSelector.EMPTY,
                LabelSelector.EMPTY));
        int[] counts = {0, 0}; // isolated sides; other sides Baseline decided
        probeBoth(withoutBaseline, withBaseline, (before, after) -> {
            for (Direction d : Direction.values()) {
                Verdict.Side a = d == Direction.EGRESS ? after.egress() : after.ingress();
                Verdict.Side b = d == Direction.EGRESS ? before.egress() : before.ingress();
                if (a.isolated()) {
                    assertThat(a.decision()).as("%s%nwithout Baseline: %s", after.explain(), before.explain()).isEqualTo(b.decision());
                    counts[0]++;
                } else if (a.decision().tier() == Tier.BASELINE) {
                    counts[1]++;
                }
            }
        });
        Statistics.label("sides isolated by NetworkPolicy").collect(counts[0] > 0);
        Statistics.label("sides Baseline decided").collect(counts[1] > 0);
    }

    @Property(tries = TRIES)
    void anAdminDenyOfEverythingFirstDeniesEveryConnectionOfItsSubject(
            @ForAll("clusters") ClusterState cluster, @ForAll("namespaces") String namespace,
            @ForAll("podSelectors") LabelSelector podSelector) {
        LabelSelector inNamespace = LabelSelector.matchLabels(Map.of(Namespace.NAME_LABEL, namespace));
        // Named to sort before every random policy at its priority, 0: so it is tried first of all.
        ClusterNetworkPolicy denyAll = denyEverything("0-deny-all", "Admin", 0, inNamespace, podSelector);
        Selector pods = Selector.parse(podSelector, "test", new FieldErrors(ObjectRef.clusterNetworkPolicy("test")));
        ClusterRuleRef ingressRule = new ClusterRuleRef(Tier.ADMIN, "0-deny-all", Direction.INGRESS, 0);
        ClusterRuleRef egressRule = new ClusterRuleRef(Tier.ADMIN, "0-deny-all", Direction.EGRESS, 0);
        int[] subjectSides = {0};
        ClusterState after = with(cluster, denyAll);
        probeBoth(cluster, after, (before, v) -> {
            boolean fromSubject = isSubject(after, v.egress(), namespace, pods);
            boolean toSubject = isSubject(after, v.ingress(), namespace, pods);
            if (fromSubject) {
                assertThat(v.egress().decision()).as(v.explain())
                        .isEqualTo(new Decision.ByClusterRule(egressRule, RuleAction.DENY, false));
                subjectSides[0]++;
            }
            if (toSubject && v.egress().pod() != null) { // ingress peers are pods: an outside source is not matched
                assertThat(v.ingress().decision()).as(v.explain())
                        .isEqualTo(new Decision.ByClusterRule(ingressRule, RuleAction.DENY, false));
                subjectSides[0]++;
            }
            if (fromSubject || (toSubject && v.egress().pod() != null)) {
                assertThat(v.allowed()).as(v.explain()).isFalse();
            } else {
                assertThat(v.egress().decision()).as("%s%nbefore: %s", v.explain(), before.explain()).isEqualTo(before.egress().decision());
                assertThat(v.ingress().decision()).as("%s%nbefore: %s", v.explain(), before.explain())
                        .isEqualTo(before.ingress().decision());
            }
        });
        Statistics.label("connections of the subject probed").collect(subjectSides[0] > 0);
    }

    /**
     * A policy denying its subject's every connection the API can express: ingress from every pod
     * (ingress peers are pods only), egress to every pod and every address.
     */
    private static ClusterNetworkPolicy denyEverything(
            String name, String tier, int priority, LabelSelector namespaceSelector, LabelSelector podSelector) {
        ClusterNetworkPolicy.Peer everyPod = new ClusterNetworkPolicy.Peer(LabelSelector.EMPTY, null, null, null, null);
        ClusterNetworkPolicy.Peer everyAddress = new ClusterNetworkPolicy.Peer(null, null, null, List.of("0.0.0.0/0", "::/0"), null);
        return new ClusterNetworkPolicy(name, tier, priority,
                new ClusterNetworkPolicy.Subject(null, new ClusterNetworkPolicy.NamespacedPods(namespaceSelector, podSelector)),
                List.of(new ClusterNetworkPolicy.Rule(null, "Deny", List.of(everyPod), null)),
                List.of(new ClusterNetworkPolicy.Rule(null, "Deny", List.of(everyPod, everyAddress), null)));
    }

    private static boolean isSubject(ClusterState cluster, Verdict.Side side, String namespace, Selector pods) {
        if (side.pod() == null) {
            return false; // not a pod endpoint: host-network, terminal or outside
        }
        Pod pod = cluster.pod(side.pod()).orElseThrow();
        return pod.namespace().equals(namespace) && pods.matches(pod.labels());
    }

    @Property(tries = 250)
    void aPolicyWithAnErrorInItselfNeverAllowsWhatItsValidReadingDenies(
            @ForAll("clusters") ClusterState random, @ForAll("policyUnderTest") ClusterNetworkPolicy policy,
            @ForAll("policyBreakages") Breakage breakage, @ForAll boolean middleDeny, @ForAll("podSelectors") LabelSelector middlePods) {
        neverOpens(random, policy, breakage, middleDeny, middlePods);
    }

    @Property(tries = 250)
    void aPolicyWithAnErrorInARuleNeverAllowsWhatItsValidReadingDenies(
            @ForAll("clusters") ClusterState random, @ForAll("policyUnderTest") ClusterNetworkPolicy policy,
            @ForAll("ruleBreakages") Breakage breakage, @ForAll boolean middleDeny, @ForAll("podSelectors") LabelSelector middlePods) {
        neverOpens(random, policy, breakage, middleDeny, middlePods);
    }

    /**
     * An error never opens: the policy broken in one way allows no connection (and no side) that the
     * policy as written denies; when the tier is what broke, in whichever tier it was meant for.
     */
    private static void neverOpens(
            ClusterState random, ClusterNetworkPolicy policy, Breakage breakage, boolean middleDeny, LabelSelector middlePods) {
        // Half the time an Admin Deny at priority 7, between the priorities the random policies take: what
        // a broken policy moved ahead of it (priority 0) or spread wider (its subject) must not skip.
        ClusterState cluster = middleDeny
                ? with(random, denyEverything("m-admin-deny", "Admin", 7, LabelSelector.EMPTY, middlePods)) : random;
        ClusterNetworkPolicy broken = breakage.apply(policy);
        assertThat(ClusterPolicyNormalizer.normalize(policy).errors()).isEmpty();
        assertThat(ClusterPolicyNormalizer.normalize(broken).errors()).as(breakage.what()).isNotEmpty();
        List<ClusterNetworkPolicy> readings = new ArrayList<>();
        if (breakage.tier()) {
            for (String tier : List.of("Admin", "Baseline")) {
                readings.add(new ClusterNetworkPolicy(policy.name(), tier, policy.priority(), policy.subject(), policy.ingress(),
                        policy.egress()));
            }
        } else {
            readings.add(policy);
        }
        int[] closedMore = {0};
        for (ClusterNetworkPolicy reading : readings) {
            probeBoth(with(cluster, reading), with(cluster, broken), (valid, invalid) -> {
                for (Direction d : Direction.values()) {
                    Verdict.Side v = d == Direction.EGRESS ? valid.egress() : valid.ingress();
                    Verdict.Side i = d == Direction.EGRESS ? invalid.egress() : invalid.ingress();
                    if (i.allowed()) {
                        assertThat(v.allowed()).as("%s opened%n%s%nvalid: %s", breakage, invalid.explain(), valid.explain()).isTrue();
                    }
                    closedMore[0] += v.allowed() && !i.allowed() ? 1 : 0;
                }
            });
        }
        Statistics.label("the broken policy denied more").collect(closedMore[0] > 0);
    }
}
