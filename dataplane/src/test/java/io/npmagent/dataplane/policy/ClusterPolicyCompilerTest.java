package io.npmagent.dataplane.policy;

import static io.npmagent.dataplane.model.ClusterPolicyFixtures.accept;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.admin;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.baseline;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.cnp;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.deny;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.from;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.inNamespaces;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.namedPort;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.networks;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.nodes;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.pass;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.tcpRange;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.to;
import static io.npmagent.dataplane.model.PolicyFixtures.labels;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.desired.CompiledClusterPolicy;
import io.npmagent.dataplane.desired.CompiledClusterRule;
import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.desired.PortMatch;
import io.npmagent.dataplane.desired.TierPolicies;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ClusterNetworkPolicy;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.Node;
import io.npmagent.dataplane.model.ObjectRef;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.model.Selector;
import io.npmagent.dataplane.model.Tier;
import io.npmagent.dataplane.tier.RuleAction;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What ClusterNetworkPolicy and Node events change in the desired state: a rules edit only the policy's
 * row, a priority edit only its pods' lists, a Node its peers' addresses. (Agreement with the evaluator is
 * {@link CompilerDifferentialPropertyTest}.)
 */
class ClusterPolicyCompilerTest {
    private static final PodKey API = PodKey.parse("shop/api");
    private static final PodKey DB = PodKey.parse("data/db");
    private static final PodKey REMOTE = PodKey.parse("shop/remote");

    private PolicyCompiler compiler;

    private DesiredDelta apply(ClusterEvent event) {
        return compiler.apply(event).delta();
    }

    private DesiredDelta apply(ClusterNetworkPolicy policy) {
        return apply(new ClusterEvent.ClusterPolicyUpserted(policy));
    }

    private TierPolicies tiers(PodKey pod) {
        return compiler.snapshot().pods().get(pod).tiers();
    }

    @BeforeEach
    void cluster() {
        compiler = new PolicyCompiler("node-1");
        apply(new ClusterEvent.NamespaceUpserted(new Namespace("shop", labels("team", "shop"))));
        apply(new ClusterEvent.NamespaceUpserted(new Namespace("data", labels("team", "data"))));
        apply(new ClusterEvent.PodUpserted(Pod.builder("shop", "api").labels(labels("app", "api")).ip("10.0.0.2").nodeName("node-1").build()));
        apply(new ClusterEvent.PodUpserted(Pod.builder("data", "db").labels(labels("app", "db")).ip("10.0.0.3").nodeName("node-1").build()));
        apply(new ClusterEvent.PodUpserted(Pod.builder("shop", "remote").labels(labels("app", "api")).ip("10.0.0.4").nodeName("node-2").build()));
    }

    @Test
    void eachLocalPodListsThePoliciesThatSelectItPerTierAndDirectionInOrder() {
        apply(admin("z-late", 5).subjectNamespaces(match()).ingress(deny(from(inNamespaces(match("team", "data"))))).build());
        apply(admin("a-early", 5).subjectNamespaces(match("team", "shop")).ingress(pass(from(inNamespaces(match())))).build());
        apply(admin("first", 1).subjectNamespaces(match()).egress(deny(to(networks("169.254.169.254/32")))).build());
        apply(baseline("default-deny", 1000).subjectNamespaces(match()).ingress(deny(from(inNamespaces(match())))).build());

        assertThat(tiers(API)).isEqualTo(new TierPolicies(List.of("a-early", "z-late"), List.of("first"), List.of("default-deny"), List.of()));
        assertThat(tiers(DB)).isEqualTo(new TierPolicies(List.of("z-late"), List.of("first"), List.of("default-deny"), List.of()));
        assertThat(compiler.snapshot().pods()).doesNotContainKey(REMOTE);
        assertThat(compiler.snapshot().inconsistencies()).isEmpty();
    }

    @Test
    void aRulesEditChangesOnlyThePolicyRowAndAPriorityEditOnlyThePodsLists() {
        apply(admin("one", 10).subjectNamespaces(match()).ingress(deny(from(inNamespaces(match("team", "data"))))).build());
        apply(admin("two", 20).subjectNamespaces(match()).ingress(deny(from(inNamespaces(match("team", "shop"))))).build());

        DesiredDelta rules = apply(admin("one", 10).subjectNamespaces(match())
                .ingress(accept(from(inNamespaces(match("team", "data"))), tcpRange(8000, 8100))).build());
        assertThat(rules.clusterPolicies()).containsOnlyKeys("one");
        assertThat(rules.pods()).isEmpty();
        assertThat(rules.clusterPolicies().get("one").after().ingress()).containsExactly(new CompiledClusterRule(0, null,
                RuleAction.ACCEPT, false, List.of(PeerSetKey.SelectorPeers.acrossNamespaces(
                        new Selector(new TreeMap<>(Map.of("team", "data")), List.of()), Selector.ALL)),
                false, List.of(new PortMatch.PortRange(Protocol.TCP, 8000, 8100))));

        DesiredDelta priority = apply(admin("one", 30).subjectNamespaces(match())
                .ingress(accept(from(inNamespaces(match("team", "data"))), tcpRange(8000, 8100))).build());
        assertThat(priority.clusterPolicies()).isEmpty();
        assertThat(priority.pods()).containsOnlyKeys(API, DB);
        assertThat(tiers(API).of(Tier.ADMIN, Direction.INGRESS)).containsExactly("two", "one");
    }

    @Test
    void aNodesPeerIsTheSelectedNodesAddressesAndFollowsTheNodes() {
        apply(new ClusterEvent.NodeUpserted(new Node("node-1", labels("role", "worker"), List.of(IpAddress.parse("192.168.0.1")))));
        apply(admin("to-workers", 10).subjectNamespaces(match()).egress(accept(to(nodes(match("role", "worker"))))).build());
        assertThat(peers("to-workers")).containsExactly(host("192.168.0.1"));

        DesiredDelta joined = apply(new ClusterEvent.NodeUpserted(
                new Node("node-2", labels("role", "worker"), List.of(IpAddress.parse("192.168.0.2"), IpAddress.parse("fd00::2")))));
        assertThat(joined.clusterPolicies()).containsOnlyKeys("to-workers");
        assertThat(joined.peerSets()).containsOnlyKeys(host("192.168.0.2"), host("fd00::2"));
        assertThat(peers("to-workers")).containsExactlyInAnyOrder(host("192.168.0.1"), host("192.168.0.2"), host("fd00::2"));

        apply(new ClusterEvent.NodeDeleted("node-1"));
        apply(new ClusterEvent.NodeDeleted("node-2"));
        assertThat(compiler.snapshot().clusterPolicies().get("to-workers").egress())
                .as("a rule whose nodes are all gone matches nothing, so it is left out").isEmpty();
        assertThat(tiers(API)).as("and the policy has nothing to say to its pods").isEqualTo(TierPolicies.NONE);
        assertThat(compiler.snapshot().peerSets()).isEmpty();
        assertThat(compiler.snapshot().inconsistencies()).isEmpty();
    }

    @Test
    void aNamedPortIsTheNameUnderEveryProtocolAndNetworksAreCidrSets() {
        apply(admin("p", 10).subjectNamespaces(match())
                .egress(deny(to(networks("10.0.0.0/24"))), deny(to(inNamespaces(match())), namedPort("http"))).build());
        List<CompiledClusterRule> rules = compiler.snapshot().clusterPolicies().get("p").egress();
        assertThat(rules.get(0).peers()).containsExactly(new PeerSetKey.CidrPeers(Cidr.parse("10.0.0.0/24"), List.of()));
        assertThat(rules.get(1).ports()).containsExactly(new PortMatch.NamedPort(Protocol.TCP, "http"),
                new PortMatch.NamedPort(Protocol.UDP, "http"), new PortMatch.NamedPort(Protocol.SCTP, "http"));
    }

    @Test
    void subjectsFollowNamespaceLabels() {
        apply(baseline("shop-only", 10).subjectNamespaces(match("team", "shop")).ingress(deny(from(inNamespaces(match())))).build());
        assertThat(tiers(DB)).isEqualTo(TierPolicies.NONE);
        DesiredDelta relabelled = apply(new ClusterEvent.NamespaceUpserted(new Namespace("data", labels("team", "shop"))));
        assertThat(relabelled.pods()).containsKey(DB);
        assertThat(tiers(DB).baselineIngress()).containsExactly("shop-only");
    }

    @Test
    void anInvalidPolicyIsReportedAndEnforcedDenyOnlyInBothTiers() {
        apply(cnp("typo").tier("admin").priority(10).subjectNamespaces(match())
                .ingress(accept(from(inNamespaces(match()))), deny(from(inNamespaces(match("team", "data"))))).build());
        assertThat(compiler.errors()).containsKey(ObjectRef.clusterNetworkPolicy("typo"));
        assertThat(tiers(API)).isEqualTo(new TierPolicies(List.of("typo"), List.of(), List.of("typo"), List.of()));
        CompiledClusterPolicy row = compiler.snapshot().clusterPolicies().get("typo");
        assertThat(row.ingress()).extracting(CompiledClusterRule::action).containsExactly(RuleAction.DENY);

        apply(new ClusterEvent.ClusterPolicyDeleted("typo"));
        assertThat(compiler.errors()).doesNotContainKey(ObjectRef.clusterNetworkPolicy("typo"));
        assertThat(compiler.snapshot().clusterPolicies()).isEmpty();
        assertThat(tiers(API)).isEqualTo(TierPolicies.NONE);
    }

    private List<PeerSetKey> peers(String policy) {
        return compiler.snapshot().clusterPolicies().get(policy).egress().get(0).peers();
    }

    private static PeerSetKey host(String ip) {
        return new PeerSetKey.CidrPeers(Cidr.host(IpAddress.parse(ip)), List.of());
    }
}
