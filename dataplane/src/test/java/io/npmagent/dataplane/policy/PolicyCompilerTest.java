package io.npmagent.dataplane.policy;

import static io.npmagent.dataplane.model.PolicyFixtures.block;
import static io.npmagent.dataplane.model.PolicyFixtures.labels;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static io.npmagent.dataplane.model.PolicyFixtures.namespaces;
import static io.npmagent.dataplane.model.PolicyFixtures.peers;
import static io.npmagent.dataplane.model.PolicyFixtures.pods;
import static io.npmagent.dataplane.model.PolicyFixtures.policy;
import static io.npmagent.dataplane.model.PolicyFixtures.port;
import static io.npmagent.dataplane.model.PolicyFixtures.ports;
import static io.npmagent.dataplane.model.PolicyFixtures.range;
import static io.npmagent.dataplane.model.PolicyFixtures.rule;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.desired.Change;
import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.desired.DesiredState;
import io.npmagent.dataplane.desired.IdentityId;
import io.npmagent.dataplane.desired.LocalPod;
import io.npmagent.dataplane.desired.Membership;
import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PodPhase;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.model.Selector;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What each kind of event changes in the desired state: only what the object can affect, as a net delta.
 * (Agreement with the evaluator and with from-scratch compiles is {@link CompilerDifferentialPropertyTest}.)
 */
class PolicyCompilerTest {
    private static final PodKey WEB = PodKey.parse("shop/web");
    private static final PodKey API = PodKey.parse("shop/api");
    private static final PolicyKey ALLOW_WEB = new PolicyKey("shop", "api-from-web");
    private static final PeerSetKey.SelectorPeers WEB_PODS =
            PeerSetKey.SelectorPeers.inNamespace("shop", selector("app", "web"));

    private PolicyCompiler compiler;

    private static Selector selector(String key, String value) {
        return new Selector(new TreeMap<>(Map.of(key, value)), List.of());
    }

    private static Pod pod(String ns, String name, String app, String ip, String node) {
        return Pod.builder(ns, name).labels(labels("app", app)).ip(ip).nodeName(node)
                .port("http", 8080, Protocol.TCP).build();
    }

    private static NetworkPolicy apiFromWeb(int port) {
        return policy("shop", "api-from-web").select(match("app", "api"))
                .ingress(rule(peers(pods(match("app", "web"))), ports(port("TCP", port)))).build();
    }

    private DesiredDelta apply(ClusterEvent event) {
        return compiler.apply(event).delta();
    }

    @BeforeEach
    void cluster() {
        compiler = new PolicyCompiler("node-1");
        apply(new ClusterEvent.NamespaceUpserted(new Namespace("shop", labels("tier", "front"))));
        apply(new ClusterEvent.PodUpserted(pod("shop", "web", "web", "10.0.0.1", "node-2")));
        apply(new ClusterEvent.PodUpserted(pod("shop", "api", "api", "10.0.0.2", "node-1")));
        apply(new ClusterEvent.PolicyUpserted(apiFromWeb(8080)));
    }

    @Test
    void theInitialStateHoldsIdentitiesSetsPoliciesAndOnlyLocalPods() {
        DesiredState s = compiler.snapshot();
        assertThat(s.identities()).hasSize(2);
        assertThat(s.addresses()).containsOnlyKeys(IpAddress.parse("10.0.0.1"), IpAddress.parse("10.0.0.2"));
        assertThat(s.peerSets()).containsOnlyKeys(WEB_PODS);
        assertThat(s.peerSets().get(WEB_PODS)).containsExactly(s.addresses().get(IpAddress.parse("10.0.0.1")));
        assertThat(s.pods()).containsOnlyKeys(API);
        assertThat(s.pods().get(API).ingressPolicies()).containsExactly(ALLOW_WEB);
        assertThat(s.pods().get(API).egressPolicies()).isEmpty();
        assertThat(s.inconsistencies()).isEmpty();
    }

    @Test
    void editingOnlyARulesPortChangesOnlyThePolicyRow() {
        DesiredDelta d = apply(new ClusterEvent.PolicyUpserted(apiFromWeb(9090)));
        assertThat(d.policies()).containsOnlyKeys(ALLOW_WEB);
        assertThat(d.size()).isEqualTo(1);
    }

    @Test
    void reapplyingTheSameObjectChangesNothing() {
        assertThat(apply(new ClusterEvent.PolicyUpserted(apiFromWeb(8080))).isEmpty()).isTrue();
        assertThat(apply(new ClusterEvent.PodUpserted(pod("shop", "web", "web", "10.0.0.1", "node-2"))).isEmpty()).isTrue();
    }

    @Test
    void aNewPodWithAnExistingIdentityAddsOnlyItsAddress() {
        DesiredDelta d = apply(new ClusterEvent.PodUpserted(pod("shop", "web-2", "web", "10.0.0.3", "node-2")));
        IdentityId web = compiler.snapshot().addresses().get(IpAddress.parse("10.0.0.1"));
        assertThat(d.addresses()).isEqualTo(Map.of(IpAddress.parse("10.0.0.3"), new Change<>(null, web)));
        assertThat(d.size()).isEqualTo(1);
    }

    @Test
    void aPeersLabelChangeMovesItsIdentityOutOfTheSetAndTouchesNoPolicyOrPod() {
        IdentityId before = compiler.snapshot().addresses().get(IpAddress.parse("10.0.0.1"));
        DesiredDelta d = apply(new ClusterEvent.PodUpserted(pod("shop", "web", "batch", "10.0.0.1", "node-2")));
        IdentityId after = compiler.snapshot().addresses().get(IpAddress.parse("10.0.0.1"));
        assertThat(after).isNotEqualTo(before);
        assertThat(d.identities()).containsOnlyKeys(before, after);
        assertThat(d.identities().get(before).isRemoval()).isTrue();
        assertThat(d.members()).isEqualTo(Map.of(new Membership(WEB_PODS, before), false));
        assertThat(d.policies()).isEmpty();
        assertThat(d.pods()).isEmpty();
        assertThat(d.peerSets()).isEmpty();
    }

    @Test
    void aTargetsLabelChangeRemovesItsPolicyFromItsRow() {
        DesiredDelta d = apply(new ClusterEvent.PodUpserted(pod("shop", "api", "other", "10.0.0.2", "node-1")));
        LocalPod row = d.pods().get(API).after();
        assertThat(row.ingressPolicies()).isEmpty();
        assertThat(d.policies()).isEmpty();
        assertThat(d.members()).isEmpty();
    }

    @Test
    void aNamespaceLabelChangeUpdatesNamespaceSelectorSets() {
        apply(new ClusterEvent.PolicyUpserted(policy("shop", "from-back").select(match("app", "api"))
                .ingress(rule(peers(namespaces(match("tier", "back"))), null)).build()));
        PeerSetKey back = PeerSetKey.SelectorPeers.acrossNamespaces(selector("tier", "back"), Selector.ALL);
        assertThat(compiler.snapshot().peerSets().get(back)).isEmpty();

        DesiredDelta d = apply(new ClusterEvent.NamespaceUpserted(new Namespace("shop", labels("tier", "back"))));
        DesiredState s = compiler.snapshot();
        assertThat(s.peerSets().get(back)).hasSize(2);
        assertThat(d.members()).containsValue(true);
        assertThat(d.policies()).isEmpty();
        assertThat(s.inconsistencies()).isEmpty();
    }

    @Test
    void aPodAppearsWhenItGetsAnAddressAndGoesWhenItTerminates() {
        DesiredDelta pending = apply(new ClusterEvent.PodUpserted(Pod.builder("shop", "api-2").labels(labels("app", "api"))
                .nodeName("node-1").phase(PodPhase.PENDING).build()));
        assertThat(pending.isEmpty()).as("nothing to enforce without an address").isTrue();

        DesiredDelta addressed = apply(new ClusterEvent.PodUpserted(Pod.builder("shop", "api-2").labels(labels("app", "api"))
                .nodeName("node-1").phase(PodPhase.PENDING).ip("10.0.0.9").build()));
        assertThat(addressed.pods().get(PodKey.parse("shop/api-2")).after().ingressPolicies()).containsExactly(ALLOW_WEB);
        assertThat(addressed.addresses()).containsOnlyKeys(IpAddress.parse("10.0.0.9"));

        DesiredDelta done = apply(new ClusterEvent.PodUpserted(Pod.builder("shop", "api-2").labels(labels("app", "api"))
                .nodeName("node-1").phase(PodPhase.SUCCEEDED).ip("10.0.0.9").build()));
        assertThat(done.pods()).containsOnlyKeys(PodKey.parse("shop/api-2"));
        assertThat(done.pods().get(PodKey.parse("shop/api-2")).isRemoval()).isTrue();
        assertThat(done.addresses().get(IpAddress.parse("10.0.0.9")))
                .isEqualTo(new Change<>(addressed.addresses().get(IpAddress.parse("10.0.0.9")).after(), null));
    }

    @Test
    void twoPoliciesShareOneSetWhichGoesWithTheLast() {
        NetworkPolicy second = policy("shop", "second").select(match("app", "api"))
                .ingress(rule(peers(pods(match("app", "web"))), ports(range("TCP", 1, 1024)))).build();
        DesiredDelta added = apply(new ClusterEvent.PolicyUpserted(second));
        assertThat(added.peerSets()).isEmpty();
        assertThat(added.pods().get(API).after().ingressPolicies())
                .containsExactly(ALLOW_WEB, new PolicyKey("shop", "second"));

        assertThat(apply(new ClusterEvent.PolicyDeleted(ALLOW_WEB)).peerSets()).isEmpty();
        DesiredDelta last = apply(new ClusterEvent.PolicyDeleted(new PolicyKey("shop", "second")));
        assertThat(last.peerSets()).isEqualTo(Map.of(WEB_PODS, false));
        assertThat(last.members()).containsOnlyKeys(new Membership(WEB_PODS,
                compiler.snapshot().addresses().get(IpAddress.parse("10.0.0.1"))));
        assertThat(last.pods().get(API).after().isolated(Direction.INGRESS)).isFalse();
        assertThat(compiler.snapshot().inconsistencies()).isEmpty();
    }

    @Test
    void cidrSetsHaveNoMembers() {
        apply(new ClusterEvent.PolicyUpserted(policy("shop", "egress").select(match("app", "api")).types("Egress")
                .egress(rule(peers(block("10.0.0.0/8", "10.0.0.1/32")), null)).build()));
        DesiredState s = compiler.snapshot();
        PeerSetKey cidr = s.policies().get(new PolicyKey("shop", "egress")).egress().get(0).peers().get(0);
        assertThat(cidr).isInstanceOf(PeerSetKey.CidrPeers.class);
        assertThat(s.peerSets().get(cidr)).isEmpty();
        assertThat(s.pods().get(API).egressPolicies()).containsExactly(new PolicyKey("shop", "egress"));
    }

    @Test
    void aContendedAddressMovesToTheNextOwnerWhenTheFirstGoes() {
        apply(new ClusterEvent.PodUpserted(pod("shop", "zz", "api", "10.0.0.1", "node-1")));
        assertThat(compiler.snapshot().pods()).as("shop/web owns 10.0.0.1").containsOnlyKeys(API);

        DesiredDelta d = apply(new ClusterEvent.PodDeleted(WEB));
        DesiredState s = compiler.snapshot();
        assertThat(s.pods()).containsKeys(PodKey.parse("shop/zz"));
        assertThat(d.addresses()).containsOnlyKeys(IpAddress.parse("10.0.0.1"));
        assertThat(s.addresses().get(IpAddress.parse("10.0.0.1"))).isEqualTo(s.pods().get(API).identity());
        assertThat(s.inconsistencies()).isEmpty();
    }

    @Test
    void invalidPoliciesAreReportedAndForgottenWhenFixed() {
        NetworkPolicy bad = policy("shop", "api-from-web").select(match("app", "api"))
                .ingress(rule(peers(pods(match("app", "web"))), ports(range("TCP", 80, 79)))).build();
        CompileResult result = compiler.apply(new ClusterEvent.PolicyUpserted(bad));
        assertThat(result.errors()).singleElement().asString()
                .isEqualTo("NetworkPolicy shop/api-from-web: spec.ingress[0].ports[0].endPort: "
                        + "endPort 79 must be greater than or equal to port 80");
        assertThat(compiler.errors()).hasSize(1);
        assertThat(compiler.snapshot().pods().get(API).ingressPolicies())
                .as("still isolating, with the broken rule dropped").containsExactly(ALLOW_WEB);
        assertThat(compiler.snapshot().policies().get(ALLOW_WEB).ingress()).isEmpty();

        assertThat(compiler.apply(new ClusterEvent.PolicyUpserted(apiFromWeb(80))).errors()).isEmpty();
        assertThat(compiler.errors()).isEmpty();
    }

    @Test
    void identityNumbersAreReusedLowestFirst() {
        DesiredState s = compiler.snapshot();
        assertThat(s.identities().keySet()).containsExactly(new IdentityId(IdentityId.FIRST), new IdentityId(IdentityId.FIRST + 1));
        apply(new ClusterEvent.PodDeleted(WEB));
        apply(new ClusterEvent.PodUpserted(pod("shop", "new", "new", "10.0.0.7", "node-2")));
        assertThat(compiler.snapshot().identities().keySet())
                .containsExactly(new IdentityId(IdentityId.FIRST), new IdentityId(IdentityId.FIRST + 1));
    }
}
