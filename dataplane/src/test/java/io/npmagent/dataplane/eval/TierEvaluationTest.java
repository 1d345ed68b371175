package io.npmagent.dataplane.eval;

import static io.npmagent.dataplane.model.ClusterPolicyFixtures.accept;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.admin;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.baseline;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.cnp;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.deny;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.domainNames;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.from;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.inNamespaces;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.named;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.namedPort;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.networks;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.nodes;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.pass;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.podsIn;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.sctp;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.tcp;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.tcpRange;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.to;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.udp;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.unknownPeer;
import static io.npmagent.dataplane.model.PolicyFixtures.expression;
import static io.npmagent.dataplane.model.PolicyFixtures.labels;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static io.npmagent.dataplane.model.PolicyFixtures.namespaces;
import static io.npmagent.dataplane.model.PolicyFixtures.peers;
import static io.npmagent.dataplane.model.PolicyFixtures.policy;
import static io.npmagent.dataplane.model.PolicyFixtures.rule;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ClusterNetworkPolicy;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.Node;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PodPhase;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.model.Tier;
import io.npmagent.dataplane.tier.RuleAction;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * ClusterNetworkPolicy semantics in the reference evaluator, one behaviour per test: the tier walk
 * (Admin, NetworkPolicy, Baseline, default allow), priorities and rule order, Pass, subjects, every peer
 * and port kind, attribution, and invalid parts failing closed.
 */
class TierEvaluationTest {
    static final PodKey XA = PodKey.parse("x/a");
    static final PodKey XB = PodKey.parse("x/b");
    static final PodKey YA = PodKey.parse("y/a");
    static final PodKey YC = PodKey.parse("y/c");
    static final PodKey HOST = PodKey.parse("x/host");

    static final Endpoint XA_V4 = Endpoint.pod(XA, IpAddress.parse("10.1.0.1"));
    static final Endpoint XB_V4 = Endpoint.pod(XB, IpAddress.parse("10.1.0.2"));
    static final Endpoint HOST_V4 = Endpoint.pod(HOST, IpAddress.parse("192.168.0.10"));
    static final Endpoint CONTROL_PLANE = Endpoint.external("192.168.0.11");

    /** ReferenceEvaluatorTest's two namespaces and their pods, and two Nodes (one holds the host-network pod's address). */
    private static final List<ClusterEvent> MODEL = Stream.concat(ReferenceEvaluatorTest.TWO_NAMESPACES.stream(), Stream.of(
            new ClusterEvent.NodeUpserted(new Node("node-1", labels("role", "worker"),
                    List.of(IpAddress.parse("192.168.0.10"), IpAddress.parse("fd00::ff:1")))),
            new ClusterEvent.NodeUpserted(new Node("node-2", labels("role", "control-plane"),
                    List.of(IpAddress.parse("192.168.0.11")))))).toList();

    /** The model with these NetworkPolicies and ClusterNetworkPolicies. */
    private static ReferenceEvaluator with(Object... policies) {
        return new ReferenceEvaluator(ClusterState.EMPTY.applyAll(events(policies)));
    }

    private static List<ClusterEvent> events(Object... policies) {
        List<ClusterEvent> events = new ArrayList<>(MODEL);
        for (Object p : policies) {
            if (p instanceof NetworkPolicy np) {
                events.add(new ClusterEvent.PolicyUpserted(np));
            } else {
                events.add(new ClusterEvent.ClusterPolicyUpserted((ClusterNetworkPolicy) p));
            }
        }
        return events;
    }

    private static Verdict tcp80(ReferenceEvaluator e, PodKey from, PodKey to) {
        return e.allowed(from, to, false, 80, Protocol.TCP);
    }

    private static boolean allowed(ReferenceEvaluator e, PodKey from, PodKey to, int port, Protocol protocol) {
        return e.allowed(from, to, false, port, protocol).allowed();
    }

    private static ClusterRuleRef ref(Tier tier, String policy, Direction direction, int index) {
        return new ClusterRuleRef(tier, policy, direction, index);
    }

    /** Subject: every pod of namespace x. */
    private static ClusterNetworkPolicy.Subject namespaceX() {
        return new ClusterNetworkPolicy.Subject(match("team", "a"), null);
    }

    /** NetworkPolicy isolating every pod of x for ingress, admitting nothing. */
    private static NetworkPolicy npDenyIngressX() {
        return policy("x", "deny").build();
    }

    /** NetworkPolicy isolating every pod of x for ingress, admitting namespace y. */
    private static NetworkPolicy npAllowFromY() {
        return policy("x", "from-y").ingress(rule(peers(namespaces(match("team", "b"))), null)).build();
    }

    @Test
    void withoutClusterPoliciesTheNetworkPolicyVerdictIsUnchanged() {
        Verdict open = tcp80(with(), YA, XA);
        assertThat(open.allowed()).isTrue();
        assertThat(open.ingress().decision()).isEqualTo(new Decision.ByDefault());
        assertThat(open.ingress().attribution()).isEqualTo("default allow");

        Verdict denied = tcp80(with(npDenyIngressX()), YA, XA);
        assertThat(denied.allowed()).isFalse();
        assertThat(denied.ingress().decision()).isEqualTo(new Decision.ByNetworkPolicy(false));
        assertThat(denied.ingress().attribution()).isEqualTo("NetworkPolicy x/deny");
        assertThat(denied.ingress().passedBy()).isEmpty();
    }

    @Nested
    class Tiers {
        @Test
        void anAdminDenyIsFinalOverANetworkPolicyThatAllows() {
            ReferenceEvaluator e = with(npAllowFromY(),
                    admin("deny-y", 10).subject(namespaceX()).ingress(deny(from(inNamespaces(match("team", "b"))))).build());
            Verdict v = tcp80(e, YA, XA);
            assertThat(v.allowed()).isFalse();
            assertThat(v.ingress().decision())
                    .isEqualTo(new Decision.ByClusterRule(ref(Tier.ADMIN, "deny-y", Direction.INGRESS, 0), RuleAction.DENY, false));
            assertThat(v.ingress().allowedBy()).as("the NetworkPolicy would have allowed it").isNotEmpty();
            assertThat(v.egress().allowed()).as("y/a's egress is not the policy's business").isTrue();
        }

        @Test
        void anAdminAcceptIsFinalOverANetworkPolicyThatIsolates() {
            ReferenceEvaluator e = with(npDenyIngressX(),
                    admin("allow-y", 10).subject(namespaceX()).ingress(accept(from(inNamespaces(match("team", "b"))))).build());
            assertThat(tcp80(e, YA, XA).allowed()).isTrue();
            assertThat(tcp80(e, YA, XA).ingress().attribution()).isEqualTo("Admin cnp/allow-y ingress[0]");
            assertThat(tcp80(e, XB, XA).allowed()).as("x/b is not in y: the NetworkPolicy decides").isFalse();
        }

        @Test
        void anEgressAcceptDoesNotOverrideTheDestinationsIngressPolicies() {
            ReferenceEvaluator e = with(policy("y", "deny").build(),
                    admin("allow-out", 10).subject(namespaceX()).egress(accept(to(inNamespaces(match())))).build());
            Verdict v = tcp80(e, XA, YA);
            assertThat(v.egress().allowed()).isTrue();
            assertThat(v.ingress().allowed()).as("y's NetworkPolicy still isolates y/a").isFalse();
            assertThat(v.allowed()).isFalse();
        }

        @Test
        void anAdminPassHandsTheConnectionToNetworkPolicy() {
            ClusterNetworkPolicy passY = admin("pass-y", 10).subject(namespaceX())
                    .ingress(pass(from(inNamespaces(match("team", "b"))))).build();
            ClusterNetworkPolicy denyAll = admin("deny-all", 20).subject(namespaceX()).ingress(deny(from(inNamespaces(match())))).build();

            Verdict allowedByNp = tcp80(with(passY, denyAll, npAllowFromY()), YA, XA);
            assertThat(allowedByNp.allowed()).as("the Pass skips deny-all, the NetworkPolicy allows").isTrue();
            assertThat(allowedByNp.ingress().passedBy()).containsExactly(ref(Tier.ADMIN, "pass-y", Direction.INGRESS, 0));
            assertThat(allowedByNp.ingress().attribution()).isEqualTo("NetworkPolicy x/from-y spec.ingress[0]");

            assertThat(tcp80(with(passY, denyAll, npDenyIngressX()), YA, XA).allowed()).as("the NetworkPolicy denies").isFalse();
            assertThat(tcp80(with(passY, denyAll, npAllowFromY()), XB, XA).allowed()).as("x/b is not passed: deny-all").isFalse();
        }

        @Test
        void anAdminPassWithoutNetworkPolicyGoesOnToBaseline() {
            ReferenceEvaluator e = with(
                    admin("pass-y", 10).subject(namespaceX()).ingress(pass(from(inNamespaces(match("team", "b"))))).build(),
                    baseline("default-deny", 10).subject(namespaceX()).ingress(deny(from(inNamespaces(match())))).build());
            Verdict v = tcp80(e, YA, XA);
            assertThat(v.allowed()).isFalse();
            assertThat(v.ingress().decision().tier()).isEqualTo(Tier.BASELINE);
            assertThat(v.ingress().attribution()).isEqualTo("Baseline cnp/default-deny ingress[0]");
        }

        @Test
        void baselineNeverOverridesNetworkPolicyEitherWay() {
            ClusterNetworkPolicy baselineDeny =
                    baseline("deny", 0).subject(namespaceX()).ingress(deny(from(inNamespaces(match())))).build();
            ClusterNetworkPolicy baselineAccept =
                    baseline("accept", 0).subject(namespaceX()).ingress(accept(from(inNamespaces(match())))).build();
            assertThat(tcp80(with(npAllowFromY(), baselineDeny), YA, XA).allowed()).isTrue();
            assertThat(tcp80(with(npDenyIngressX(), baselineAccept), YA, XA).allowed()).isFalse();
        }

        @Test
        void baselineDecidesForPodsNoNetworkPolicySelects() {
            ReferenceEvaluator e = with(policy("x", "only-b").select(match("pod", "b")).build(),
                    baseline("default-deny", 10).subject(namespaceX()).ingress(deny(from(inNamespaces(match())))).build());
            assertThat(tcp80(e, YA, XA).allowed()).as("x/a is not isolated: Baseline denies").isFalse();
            assertThat(e.allowed(YA, XB, false, 8080, Protocol.TCP).ingress().attribution()).isEqualTo("NetworkPolicy x/only-b");
        }

        @Test
        void aBaselinePassGoesOnToTheDefaultAllow() {
            ReferenceEvaluator e = with(
                    baseline("pass-y", 1).subject(namespaceX()).ingress(pass(from(inNamespaces(match("team", "b"))))).build(),
                    baseline("default-deny", 2).subject(namespaceX()).ingress(deny(from(inNamespaces(match())))).build());
            Verdict v = tcp80(e, YA, XA);
            assertThat(v.allowed()).isTrue();
            assertThat(v.ingress().decision()).isEqualTo(new Decision.ByDefault());
            assertThat(v.ingress().passedBy()).containsExactly(ref(Tier.BASELINE, "pass-y", Direction.INGRESS, 0));
            assertThat(tcp80(e, XB, XA).allowed()).as("not passed: default-deny").isFalse();
        }

        @Test
        void theAdminTierComesBeforeBaselineWhateverTheirPriorities() {
            ReferenceEvaluator e = with(
                    baseline("deny", 0).subject(namespaceX()).ingress(deny(from(inNamespaces(match())))).build(),
                    admin("accept", 1000).subject(namespaceX()).ingress(accept(from(inNamespaces(match())))).build());
            assertThat(tcp80(e, YA, XA).ingress().attribution()).isEqualTo("Admin cnp/accept ingress[0]");
        }

        @Test
        void aPolicyWithoutRulesForADirectionLeavesItAlone() {
            ReferenceEvaluator e = with(admin("egress-only", 10).subject(namespaceX()).egress(deny(to(networks("203.0.113.0/24")))).build());
            Verdict v = tcp80(e, YA, XA);
            assertThat(v.allowed()).as("no implicit isolation, unlike NetworkPolicy").isTrue();
            assertThat(v.ingress().decision()).isEqualTo(new Decision.ByDefault());
        }
    }

    @Nested
    class Order {
        @Test
        void lowerPriorityIsTriedFirst() {
            ClusterNetworkPolicy.Rule acceptY = accept(from(inNamespaces(match("team", "b"))));
            ClusterNetworkPolicy.Rule denyAll = deny(from(inNamespaces(match())));
            assertThat(tcp80(with(admin("accept", 5).subject(namespaceX()).ingress(acceptY).build(),
                    admin("deny", 10).subject(namespaceX()).ingress(denyAll).build()), YA, XA).allowed()).isTrue();
            assertThat(tcp80(with(admin("accept", 15).subject(namespaceX()).ingress(acceptY).build(),
                    admin("deny", 10).subject(namespaceX()).ingress(denyAll).build()), YA, XA).allowed()).isFalse();
        }

        @Test
        void rulesAreTriedInTheOrderWrittenAndTheFirstMatchDecides() {
            ReferenceEvaluator e = with(admin("p", 10).subject(namespaceX()).ingress(
                    accept(from(inNamespaces(match("team", "b"))), tcp(80)),
                    deny(from(inNamespaces(match()))),
                    accept(from(inNamespaces(match())))).build());
            assertThat(tcp80(e, YA, XA).ingress().attribution()).isEqualTo("Admin cnp/p ingress[0]");
            Verdict other = e.allowed(YA, XA, false, 81, Protocol.TCP);
            assertThat(other.allowed()).isFalse();
            assertThat(other.ingress().attribution()).as("the later Accept is never reached").isEqualTo("Admin cnp/p ingress[1]");
        }

        @Test
        void aPassSkipsTheRestOfItsOwnPolicyAndEveryLaterPolicyOfTheTier() {
            ReferenceEvaluator e = with(
                    admin("p", 10).subject(namespaceX()).ingress(pass(from(inNamespaces(match("team", "b")))),
                            deny(from(inNamespaces(match())))).build(),
                    admin("q", 20).subject(namespaceX()).ingress(deny(from(inNamespaces(match())))).build());
            assertThat(tcp80(e, YA, XA).allowed()).isTrue();
            assertThat(tcp80(e, XB, XA).ingress().attribution()).isEqualTo("Admin cnp/p ingress[1]");
        }

        @Test
        void equalPrioritiesAreOrderedByNameWhicheverWayTheyArrive() {
            ClusterNetworkPolicy.Rule acceptY = accept(from(inNamespaces(match("team", "b"))));
            ClusterNetworkPolicy.Rule denyAll = deny(from(inNamespaces(match())));
            ClusterNetworkPolicy a = admin("a-accept", 10).subject(namespaceX()).ingress(acceptY).build();
            ClusterNetworkPolicy b = admin("b-deny", 10).subject(namespaceX()).ingress(denyAll).build();
            ClusterNetworkPolicy c = admin("c-accept", 10).subject(namespaceX()).ingress(acceptY).build();

            List<ClusterEvent> forwards = events(a, b);
            List<ClusterEvent> backwards = events(b, a);
            Collections.reverse(backwards);
            for (List<ClusterEvent> order : List.of(forwards, backwards)) {
                Verdict v = tcp80(new ReferenceEvaluator(ClusterState.EMPTY.applyAll(order)), YA, XA);
                assertThat(v.allowed()).isTrue();
                assertThat(v.ingress().attribution()).isEqualTo("Admin cnp/a-accept ingress[0]");
            }
            assertThat(tcp80(with(c, b), YA, XA).ingress().attribution()).as("renamed, it comes second")
                    .isEqualTo("Admin cnp/b-deny ingress[0]");
        }
    }

    @Nested
    class Subjects {
        @Test
        void aNamespacesSubjectSelectsEveryPodOfTheMatchingNamespaces() {
            ReferenceEvaluator e = with(admin("deny-to-x", 10).subjectNamespaces(match("team", "a"))
                    .ingress(deny(from(inNamespaces(match())))).build());
            assertThat(tcp80(e, YA, XA).allowed()).isFalse();
            assertThat(e.allowed(YA, XB, false, 8080, Protocol.TCP).allowed()).isFalse();
            assertThat(tcp80(e, XA, YA).allowed()).isTrue();
        }

        @Test
        void aPodsSubjectNeedsBothSelectorsToMatch() {
            ReferenceEvaluator e = with(admin("deny-to-a-in-y", 10).subjectPods(match("team", "b"), match("pod", "a"))
                    .ingress(deny(from(inNamespaces(match())))).build());
            assertThat(tcp80(e, XA, YA).allowed()).isFalse();
            assertThat(tcp80(e, YA, XA).allowed()).as("right pod label, wrong namespace").isTrue();
            assertThat(tcp80(e, XA, YC).allowed()).as("right namespace, wrong pod").isTrue();
        }

        @Test
        void hostNetworkPodsAreNeverSubjects() {
            ClusterNetworkPolicy denyEverything = admin("deny", 10).subjectNamespaces(match())
                    .ingress(deny(from(inNamespaces(match()))))
                    .egress(deny(to(networks("0.0.0.0/0", "::/0")))).build();
            ReferenceEvaluator e = with(denyEverything);
            Verdict fromHost = e.allowed(HOST_V4, CONTROL_PLANE, 80, Protocol.TCP);
            assertThat(fromHost.allowed()).isTrue();
            assertThat(fromHost.egress().pod()).isNull();
            assertThat(e.allowed(XA_V4, CONTROL_PLANE, 80, Protocol.TCP).allowed()).as("x/a, same labels, is a subject").isFalse();
        }

        @Test
        void aTerminalPodIsNoSubject() {
            List<ClusterEvent> events = events(admin("deny", 10).subjectNamespaces(match())
                    .egress(deny(to(networks("0.0.0.0/0")))).build());
            events.add(new ClusterEvent.PodUpserted(Pod.builder("x", "done").phase(PodPhase.FAILED)
                    .ip("10.1.0.9").build()));
            ReferenceEvaluator e = new ReferenceEvaluator(ClusterState.EMPTY.applyAll(events));
            assertThat(e.allowed(Endpoint.pod(PodKey.parse("x/done"), IpAddress.parse("10.1.0.9")), CONTROL_PLANE, 80, Protocol.TCP)
                    .allowed()).isTrue();
        }
    }

    @Nested
    class Peers {
        @Test
        void aPodsPeerNeedsBothSelectorsToMatch() {
            ReferenceEvaluator e = with(admin("deny", 10).subject(namespaceX())
                    .ingress(deny(from(podsIn(match("team", "b"), match("role", "client"))))).build());
            assertThat(tcp80(e, YC, XA).allowed()).isFalse();
            assertThat(tcp80(e, YA, XA).allowed()).as("y/a is no client").isTrue();
        }

        @Test
        void hostNetworkPodsAreNeverPodPeers() {
            ReferenceEvaluator e = with(admin("deny", 10).subject(namespaceX())
                    .ingress(deny(from(inNamespaces(match()), podsIn(match(), match("pod", "a"))))).build());
            assertThat(e.allowed(HOST_V4, XB_V4, 8080, Protocol.TCP).allowed()).as("x/host has pod=a but the node's address").isTrue();
            assertThat(e.allowed(XA_V4, XB_V4, 8080, Protocol.TCP).allowed()).isFalse();
        }

        @Test
        void networksMatchPodAddressesAndOthers() {
            ReferenceEvaluator e = with(admin("deny-y-net", 10).subject(namespaceX())
                    .egress(deny(to(networks("10.2.0.0/16", "fd00::2:0/112")))).build());
            assertThat(tcp80(e, XA, YA).allowed()).as("y/a's address is in 10.2.0.0/16").isFalse();
            assertThat(e.allowed(XA, YA, true, 80, Protocol.TCP).allowed()).as("and fd00::2:1 in fd00::2:0/112").isFalse();
            assertThat(e.allowed(XA_V4, Endpoint.external("10.2.99.1"), 443, Protocol.TCP).allowed()).isFalse();
            assertThat(e.allowed(XA_V4, Endpoint.external("10.3.0.1"), 443, Protocol.TCP).allowed()).isTrue();
            assertThat(e.allowed(XA, XB, false, 8080, Protocol.TCP).allowed()).as("x/b is in 10.1.0.0/16").isTrue();
        }

        @Test
        void anIpv4NetworkNeverMatchesAnIpv6Address() {
            ReferenceEvaluator e = with(admin("deny", 10).subject(namespaceX()).egress(deny(to(networks("0.0.0.0/0")))).build());
            assertThat(e.allowed(XA, YA, false, 80, Protocol.TCP).allowed()).isFalse();
            assertThat(e.allowed(XA, YA, true, 80, Protocol.TCP).allowed()).isTrue();
        }

        @Test
        void nodesMatchTheAddressesOfTheSelectedNodes() {
            ReferenceEvaluator e = with(admin("deny-control-plane", 10).subject(namespaceX())
                    .egress(deny(to(nodes(match("role", "control-plane"))))).build());
            assertThat(e.allowed(XA_V4, CONTROL_PLANE, 6443, Protocol.TCP).allowed()).isFalse();
            assertThat(e.allowed(XA_V4, HOST_V4, 80, Protocol.TCP).allowed()).as("node-1 is a worker").isTrue();
            assertThat(tcp80(e, XA, YA).allowed()).as("a pod is no node").isTrue();

            ReferenceEvaluator everyNode = with(admin("deny-nodes", 10).subject(namespaceX()).egress(deny(to(nodes(match())))).build());
            Verdict toHostPod = everyNode.allowed(XA_V4, HOST_V4, 80, Protocol.TCP);
            assertThat(toHostPod.allowed()).as("a host-network pod has its node's address").isFalse();
            assertThat(everyNode.allowed(XA_V4, Endpoint.pod(HOST, IpAddress.parse("192.168.0.10")), 80, Protocol.TCP).egress()
                    .attribution()).isEqualTo("Admin cnp/deny-nodes egress[0]");
            assertThat(everyNode.allowed(XA_V4, Endpoint.external("192.168.0.12"), 80, Protocol.TCP).allowed())
                    .as("no node has that address").isTrue();
        }

        @Test
        void aNodesPeerFollowsTheNodeObjects() {
            ClusterNetworkPolicy denyWorkers = admin("deny-workers", 10).subject(namespaceX())
                    .egress(deny(to(nodes(match("role", "worker"))))).build();
            List<ClusterEvent> events = events(denyWorkers);
            events.add(new ClusterEvent.NodeUpserted(new Node("node-2", labels("role", "worker"), List.of(IpAddress.parse("192.168.0.11")))));
            assertThat(with(denyWorkers).allowed(XA_V4, CONTROL_PLANE, 80, Protocol.TCP).allowed()).isTrue();
            assertThat(new ReferenceEvaluator(ClusterState.EMPTY.applyAll(events)).allowed(XA_V4, CONTROL_PLANE, 80, Protocol.TCP)
                    .allowed()).as("node-2 relabelled a worker").isFalse();
            events.add(new ClusterEvent.NodeDeleted("node-2"));
            assertThat(new ReferenceEvaluator(ClusterState.EMPTY.applyAll(events)).allowed(XA_V4, CONTROL_PLANE, 80, Protocol.TCP)
                    .allowed()).as("node-2 gone").isTrue();
        }

        @Test
        void ingressPeersMatchPodsOnlySoOutsideAddressesPassThrough() {
            ReferenceEvaluator e = with(admin("deny", 10).subject(namespaceX()).ingress(deny(from(inNamespaces(match())))).build());
            assertThat(e.allowed(Endpoint.external("203.0.113.5"), XA_V4, 80, Protocol.TCP).allowed()).isTrue();
        }
    }

    @Nested
    class Ports {
        @Test
        void aPortMatchesOnlyItsProtocolAndNumber() {
            ReferenceEvaluator e = with(admin("deny-80", 10).subject(namespaceX()).ingress(deny(from(inNamespaces(match())), tcp(80))).build());
            assertThat(allowed(e, YA, XA, 80, Protocol.TCP)).isFalse();
            assertThat(allowed(e, YA, XA, 81, Protocol.TCP)).isTrue();
            assertThat(allowed(e, YA, XA, 80, Protocol.UDP)).isTrue();
            assertThat(allowed(e, YA, XA, 80, Protocol.SCTP)).isTrue();
        }

        @Test
        void aRangeIsInclusiveAtBothEnds() {
            ReferenceEvaluator e = with(admin("deny-range", 10).subject(namespaceX())
                    .ingress(deny(from(inNamespaces(match())), tcpRange(8000, 8080))).build());
            assertThat(allowed(e, YA, XA, 7999, Protocol.TCP)).isTrue();
            assertThat(allowed(e, YA, XA, 8000, Protocol.TCP)).isFalse();
            assertThat(allowed(e, YA, XA, 8080, Protocol.TCP)).isFalse();
            assertThat(allowed(e, YA, XA, 8081, Protocol.TCP)).isTrue();
            assertThat(allowed(e, YA, XA, 8040, Protocol.UDP)).isTrue();
        }

        @Test
        void protocolEntriesAreAlternativesAndAbsentProtocolsMatchEverything() {
            ReferenceEvaluator some = with(admin("deny", 10).subject(namespaceX())
                    .ingress(deny(from(inNamespaces(match())), udp(53), sctp(9))).build());
            assertThat(allowed(some, YA, XA, 53, Protocol.UDP)).isFalse();
            assertThat(allowed(some, YA, XA, 9, Protocol.SCTP)).isFalse();
            assertThat(allowed(some, YA, XA, 53, Protocol.TCP)).isTrue();
            ReferenceEvaluator every = with(admin("deny", 10).subject(namespaceX()).ingress(deny(from(inNamespaces(match())))).build());
            for (Protocol p : Protocol.values()) {
                assertThat(allowed(every, YA, XA, 1, p)).isFalse();
                assertThat(allowed(every, YA, XA, 65535, p)).isFalse();
            }
        }

        @Test
        void aNamedPortResolvesOnTheSubjectForIngress() {
            ReferenceEvaluator e = with(admin("deny-http", 10).subject(namespaceX())
                    .ingress(deny(from(inNamespaces(match())), namedPort("http"))).build());
            assertThat(allowed(e, YA, XA, 80, Protocol.TCP)).as("x/a serves http on 80").isFalse();
            assertThat(allowed(e, YA, XB, 80, Protocol.TCP)).as("x/b serves http on 8080").isTrue();
            assertThat(allowed(e, YA, XB, 8080, Protocol.TCP)).isFalse();
        }

        @Test
        void aNamedPortResolvesOnThePeerForEgressWithItsProtocol() {
            ReferenceEvaluator e = with(admin("deny-dns", 10).subjectNamespaces(match("team", "b"))
                    .egress(deny(to(inNamespaces(match())), namedPort("dns"))).build());
            assertThat(allowed(e, YA, XA, 53, Protocol.UDP)).as("x/a's dns is UDP 53").isFalse();
            assertThat(allowed(e, YA, XA, 53, Protocol.TCP)).as("x/a has no TCP dns").isTrue();
            assertThat(allowed(e, YA, XB, 53, Protocol.UDP)).as("x/b declares no dns").isTrue();
        }

        @Test
        void aNamedPortNeverMatchesAnAddressThatIsNoPod() {
            ReferenceEvaluator e = with(npDenyIngressX(), policy("x", "deny-out").types("Egress").build(),
                    admin("accept-http", 10).subject(namespaceX()).egress(accept(to(inNamespaces(match())), namedPort("http"))).build());
            assertThat(allowed(e, XA, YA, 80, Protocol.TCP)).isTrue();
            assertThat(e.allowed(XA_V4, HOST_V4, 80, Protocol.TCP).allowed()).as("x/host is judged as its node's address").isFalse();
        }
    }

    @Nested
    class Attribution {
        @Test
        void aVerdictNamesTierPolicyRuleAndTheRulesName() {
            ReferenceEvaluator e = with(admin("deny-metadata", 10).subjectNamespaces(match())
                    .egress(named("block-imds", deny(to(networks("169.254.169.254/32"))))).build());
            Verdict v = e.allowed(XA_V4, Endpoint.external("169.254.169.254"), 80, Protocol.TCP);
            assertThat(v.allowed()).isFalse();
            assertThat(v.egress().attribution()).isEqualTo("Admin cnp/deny-metadata egress[0] \"block-imds\"");
            assertThat(v.explain()).contains("DENIED").contains("egress from x/a: DENIED by Admin cnp/deny-metadata egress[0]")
                    .contains("Deny");
        }

        @Test
        void aPassIsNamedBesideWhatDecidedAfterIt() {
            ReferenceEvaluator e = with(npAllowFromY(),
                    admin("delegate", 10).subject(namespaceX()).ingress(pass(from(inNamespaces(match("team", "b"))))).build());
            Verdict v = tcp80(e, YA, XA);
            assertThat(v.ingress().attribution()).isEqualTo("NetworkPolicy x/from-y spec.ingress[0]");
            assertThat(v.explain()).contains("after Pass by Admin cnp/delegate ingress[0]");
        }

        @Test
        void aNetworkPolicyVerdictStillListsWhatIsolatesWhenAnAdminRuleDecided() {
            ReferenceEvaluator e = with(npDenyIngressX(),
                    admin("accept", 10).subject(namespaceX()).ingress(accept(from(inNamespaces(match())))).build());
            Verdict.Side side = tcp80(e, YA, XA).ingress();
            assertThat(side.isolatedBy()).containsExactly(new PolicyKey("x", "deny"));
            assertThat(side.allowed()).isTrue();
            assertThat(side.decision().tier()).isEqualTo(Tier.ADMIN);
        }
    }

    @Nested
    class FailingClosed {
        @Test
        void anAcceptRuleWithDomainNamesMatchesNothingNotEvenItsOtherPeers() {
            ReferenceEvaluator e = with(policy("x", "deny-out").types("Egress").build(),
                    admin("allow-out", 10).subject(namespaceX())
                            .egress(accept(to(inNamespaces(match()), domainNames("example.com")))).build());
            Verdict v = tcp80(e, XA, YA);
            assertThat(v.allowed()).as("left to the NetworkPolicy, which isolates").isFalse();
            assertThat(v.egress().attribution()).isEqualTo("NetworkPolicy x/deny-out");
        }

        @Test
        void aDenyRuleWithDomainNamesDeniesEverythingThatReachesIt() {
            ReferenceEvaluator e = with(admin("p", 10).subject(namespaceX()).egress(
                    accept(to(networks("10.2.0.1/32"))),
                    deny(to(domainNames("example.com")))).build());
            assertThat(tcp80(e, XA, YA).allowed()).as("the earlier Accept still decides").isTrue();
            Verdict v = tcp80(e, XA, YC);
            assertThat(v.allowed()).isFalse();
            assertThat(v.egress().decision()).isEqualTo(
                    new Decision.ByClusterRule(ref(Tier.ADMIN, "p", Direction.EGRESS, 1), RuleAction.DENY, true));
            assertThat(e.allowed(XA_V4, Endpoint.external("198.51.100.7"), 443, Protocol.UDP).allowed()).isFalse();
            assertThat(v.explain()).contains("fails closed");
        }

        @Test
        void aPassRuleWithAPeerOfUnknownKindDeniesEverythingThatReachesIt() {
            ReferenceEvaluator e = with(npAllowFromY(),
                    admin("p", 10).subject(namespaceX()).ingress(pass(from(unknownPeer()))).build());
            assertThat(tcp80(e, YA, XA).allowed()).as("not passed to the NetworkPolicy that would allow it").isFalse();
        }

        @Test
        void aPolicyInAnUnknownTierOnlyDeniesAndFromTheAdminTierFirst() {
            ReferenceEvaluator e = with(npAllowFromY(),
                    cnp("typo").tier("admin").priority(10).subject(namespaceX()).ingress(
                            accept(from(inNamespaces(match("role", "none")))),
                            deny(from(inNamespaces(match("team", "b")))),
                            pass(from(inNamespaces(match())))).build());
            Verdict fromY = tcp80(e, YA, XA);
            assertThat(fromY.allowed()).as("the Deny stands, ahead of the NetworkPolicy").isFalse();
            assertThat(fromY.ingress().decision().tier()).isEqualTo(Tier.ADMIN);
            Verdict fromX = tcp80(e, XB, XA);
            assertThat(fromX.allowed()).as("the Pass became a Deny").isFalse();
            assertThat(fromX.ingress().decision())
                    .isEqualTo(new Decision.ByClusterRule(ref(Tier.ADMIN, "typo", Direction.INGRESS, 2), RuleAction.DENY, true));
        }

        /**
         * Found by the property test: read as Admin alone, an Admin Pass tried before it skipped its Deny, which
         * as the Baseline policy it may have meant would still have denied. So it is enforced in both tiers.
         */
        @Test
        void aPolicyInAnUnknownTierAlsoDeniesFromTheBaselineTierAfterAnAdminPass() {
            ReferenceEvaluator e = with(
                    admin("delegate", 1).subject(namespaceX()).ingress(pass(from(inNamespaces(match())))).build(),
                    cnp("typo").tier("baseline").priority(10).subject(namespaceX()).ingress(
                            deny(from(inNamespaces(match("team", "b"))))).build());
            Verdict fromY = tcp80(e, YA, XA);
            assertThat(fromY.allowed()).isFalse();
            assertThat(fromY.ingress().passedBy()).containsExactly(ref(Tier.ADMIN, "delegate", Direction.INGRESS, 0));
            assertThat(fromY.ingress().decision())
                    .isEqualTo(new Decision.ByClusterRule(ref(Tier.BASELINE, "typo", Direction.INGRESS, 0), RuleAction.DENY, false));
            assertThat(tcp80(e, XB, XA).allowed()).as("what no Deny of it matches is passed and allowed").isTrue();
        }

        @Test
        void anUnreadableSubjectSelectorCoversEveryPodItCouldHaveMeant() {
            ReferenceEvaluator e = with(admin("bad-subject", 10)
                    .subjectPods(match("team", "a"), expression("pod", "in", "a"))
                    .ingress(deny(from(inNamespaces(match("team", "b"))))).build());
            assertThat(e.allowed(YA, XB, false, 8080, Protocol.TCP).allowed()).as("every pod of x").isFalse();
            assertThat(tcp80(e, XA, YA).allowed()).as("but only of x: the namespace selector is fine").isTrue();
        }
    }
}
