package io.npmagent.dataplane.eval;

import static io.npmagent.dataplane.model.PolicyFixtures.allowAll;
import static io.npmagent.dataplane.model.PolicyFixtures.anyPortOf;
import static io.npmagent.dataplane.model.PolicyFixtures.block;
import static io.npmagent.dataplane.model.PolicyFixtures.expression;
import static io.npmagent.dataplane.model.PolicyFixtures.labels;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static io.npmagent.dataplane.model.PolicyFixtures.named;
import static io.npmagent.dataplane.model.PolicyFixtures.namespaces;
import static io.npmagent.dataplane.model.PolicyFixtures.peers;
import static io.npmagent.dataplane.model.PolicyFixtures.pods;
import static io.npmagent.dataplane.model.PolicyFixtures.podsInNamespaces;
import static io.npmagent.dataplane.model.PolicyFixtures.policy;
import static io.npmagent.dataplane.model.PolicyFixtures.port;
import static io.npmagent.dataplane.model.PolicyFixtures.ports;
import static io.npmagent.dataplane.model.PolicyFixtures.range;
import static io.npmagent.dataplane.model.PolicyFixtures.rule;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PodPhase;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The v1 semantics, one behaviour per test, on a small two-namespace cluster. */
class ReferenceEvaluatorTest {
    static final PodKey XA = PodKey.parse("x/a");
    static final PodKey XB = PodKey.parse("x/b");
    static final PodKey YA = PodKey.parse("y/a");
    static final PodKey YC = PodKey.parse("y/c");
    static final PodKey HOST = PodKey.parse("x/host");
    static final PodKey NEW = PodKey.parse("x/new");

    /** Two namespaces, four pods on the pod network and one in the host's (TierEvaluationTest builds on it too). */
    static final List<ClusterEvent> TWO_NAMESPACES = List.of(
            new ClusterEvent.NamespaceUpserted(new Namespace("x", labels("team", "a"))),
            new ClusterEvent.NamespaceUpserted(new Namespace("y", labels("team", "b"))),
            new ClusterEvent.PodUpserted(Pod.builder("x", "a").labels(labels("pod", "a"))
                    .ip("10.1.0.1").ip("fd00::1:1").port("http", 80, Protocol.TCP).port("dns", 53, Protocol.UDP).build()),
            new ClusterEvent.PodUpserted(Pod.builder("x", "b").labels(labels("pod", "b"))
                    .ip("10.1.0.2").ip("fd00::1:2").port("http", 8080, Protocol.TCP).build()),
            new ClusterEvent.PodUpserted(Pod.builder("y", "a").labels(labels("pod", "a"))
                    .ip("10.2.0.1").ip("fd00::2:1").port("http", 80, Protocol.TCP).build()),
            new ClusterEvent.PodUpserted(Pod.builder("y", "c").labels(labels("pod", "c", "role", "client"))
                    .ip("10.2.0.3").build()),
            new ClusterEvent.PodUpserted(Pod.builder("x", "host").labels(labels("pod", "a"))
                    .hostNetwork(true).ip("192.168.0.10").port("http", 80, Protocol.TCP).build()));

    private static final List<ClusterEvent> MODEL = Stream.concat(TWO_NAMESPACES.stream(), Stream.of(
            new ClusterEvent.PodUpserted(Pod.builder("x", "new").labels(labels("pod", "a")).phase(PodPhase.PENDING).build()))).toList();

    private static ReferenceEvaluator with(NetworkPolicy... policies) {
        List<ClusterEvent> events = new ArrayList<>(MODEL);
        for (NetworkPolicy p : policies) {
            events.add(new ClusterEvent.PolicyUpserted(p));
        }
        return new ReferenceEvaluator(ClusterState.EMPTY.applyAll(events));
    }

    private static boolean tcp(ReferenceEvaluator e, PodKey from, PodKey to, int port) {
        return e.allowed(from, to, false, port, Protocol.TCP).allowed();
    }

    @Test
    void withoutPoliciesEverythingIsAllowed() {
        ReferenceEvaluator e = with();
        Verdict v = e.allowed(XA, YA, false, 80, Protocol.TCP);
        assertThat(v.allowed()).isTrue();
        assertThat(v.egress().isolated()).isFalse();
        assertThat(v.ingress().isolated()).isFalse();
    }

    @Nested
    class PolicyTypes {
        @Test
        void absentPolicyTypesWithoutEgressRulesIsolatesIngressOnly() {
            ReferenceEvaluator e = with(policy("x", "p").build());
            assertThat(tcp(e, YA, XA, 80)).isFalse();
            assertThat(tcp(e, XA, YA, 80)).as("egress of x/a is not isolated").isTrue();
        }

        @Test
        void anEmptyEgressListDoesNotMakeAnEgressPolicy() {
            NetworkPolicy p = new NetworkPolicy("x", "p", null, null, List.of(allowAll()), List.of());
            ReferenceEvaluator e = with(p);
            assertThat(tcp(e, XA, YA, 80)).isTrue();
            assertThat(e.allowed(XA, YA, false, 80, Protocol.TCP).egress().isolated()).isFalse();
        }

        @Test
        void egressRulesWithoutPolicyTypesMakeAnEgressPolicyToo() {
            ReferenceEvaluator e = with(policy("x", "p").select(match("pod", "a"))
                    .egress(rule(peers(pods(match("pod", "b"))), null)).build());
            assertThat(tcp(e, XA, YA, 80)).isFalse();
            assertThat(tcp(e, XA, XB, 8080)).isTrue();
            assertThat(tcp(e, YA, XA, 80)).as("ingress is isolated as well, with no rule").isFalse();
        }

        @Test
        void explicitEgressOnlyLeavesIngressOpenEvenWithIngressRules() {
            ReferenceEvaluator e = with(policy("x", "p").types("Egress")
                    .ingress(rule(peers(pods(match("pod", "nobody"))), null)).build());
            assertThat(tcp(e, YA, XA, 80)).isTrue();
            assertThat(tcp(e, XA, YA, 80)).isFalse();
        }

        @Test
        void bothSidesMustAllow() {
            ReferenceEvaluator e = with(
                    policy("x", "egress-to-y").types("Egress").egress(rule(peers(namespaces(match("team", "b"))), null)).build(),
                    policy("y", "deny-ingress").types("Ingress").build());
            Verdict v = e.allowed(XA, YA, false, 80, Protocol.TCP);
            assertThat(v.egress().allowed()).isTrue();
            assertThat(v.ingress().allowed()).isFalse();
            assertThat(v.allowed()).isFalse();
        }
    }

    @Nested
    class Peers {
        @Test
        void podSelectorAloneSelectsInThePolicysNamespaceOnly() {
            ReferenceEvaluator e = with(policy("x", "p").ingress(rule(peers(pods(match("pod", "a"))), null)).build());
            assertThat(tcp(e, XA, XB, 8080)).isTrue();
            assertThat(tcp(e, YA, XB, 8080)).as("y/a has the label but lives in y").isFalse();
        }

        @Test
        void namespaceSelectorAloneSelectsEveryPodOfMatchingNamespaces() {
            ReferenceEvaluator e = with(policy("x", "p").ingress(rule(peers(namespaces(match("team", "b"))), null)).build());
            assertThat(tcp(e, YA, XA, 80)).isTrue();
            assertThat(tcp(e, YC, XA, 80)).isTrue();
            assertThat(tcp(e, XB, XA, 80)).isFalse();
        }

        @Test
        void emptyNamespaceSelectorMatchesAllNamespaces() {
            ReferenceEvaluator e = with(policy("x", "p").ingress(rule(peers(namespaces(match())), null)).build());
            assertThat(tcp(e, YC, XA, 80)).isTrue();
            assertThat(tcp(e, XB, XA, 80)).isTrue();
        }

        @Test
        void bothSelectorsInOnePeerMustBothMatch() {
            ReferenceEvaluator e = with(policy("x", "p")
                    .ingress(rule(peers(podsInNamespaces(match("pod", "a"), match("team", "b"))), null)).build());
            assertThat(tcp(e, YA, XB, 8080)).isTrue();
            assertThat(tcp(e, YC, XB, 8080)).as("right namespace, wrong pod").isFalse();
            assertThat(tcp(e, XA, XB, 8080)).as("right pod, wrong namespace").isFalse();
        }

        @Test
        void twoPeersInOneRuleAreAlternatives() {
            ReferenceEvaluator e = with(policy("x", "p")
                    .ingress(rule(peers(pods(match("pod", "a")), namespaces(match("team", "b"))), null)).build());
            assertThat(tcp(e, XA, XB, 8080)).isTrue();
            assertThat(tcp(e, YC, XB, 8080)).isTrue();
        }

        @Test
        void notInMatchesPodsWithoutTheLabel() {
            ReferenceEvaluator e = with(policy("y", "p")
                    .ingress(rule(peers(pods(expression("role", "NotIn", "client"))), null)).build());
            assertThat(tcp(e, YA, YC, 80)).as("y/a has no role label").isTrue();
            assertThat(tcp(e, YC, YA, 80)).isFalse();
        }

        @Test
        void ipBlockWithExceptMatchesAddressesIncludingPods() {
            ReferenceEvaluator e = with(policy("x", "p").types("Egress")
                    .egress(rule(peers(block("10.2.0.0/16", "10.2.0.3/32")), null)).build());
            assertThat(tcp(e, XA, YA, 80)).isTrue();
            assertThat(tcp(e, XA, YC, 80)).as("excepted").isFalse();
            assertThat(e.allowed(Endpoint.pod(XA, IpAddress.parse("10.1.0.1")), Endpoint.external("10.2.99.1"), 443, Protocol.TCP)
                    .allowed()).isTrue();
            assertThat(e.allowed(Endpoint.pod(XA, IpAddress.parse("10.1.0.1")), Endpoint.external("10.3.0.1"), 443, Protocol.TCP)
                    .allowed()).isFalse();
        }

        @Test
        void ipv6IpBlockWithExcept() {
            ReferenceEvaluator e = with(policy("x", "p").types("Egress")
                    .egress(rule(peers(block("fd00::2:0/112", "fd00::2:1/128"), block("10.2.0.0/16")), null)).build());
            assertThat(e.allowed(XA, YA, true, 80, Protocol.TCP).allowed()).as("fd00::2:1 is excepted").isFalse();
            assertThat(e.allowed(XA, YA, false, 80, Protocol.TCP).allowed()).as("IPv4 via the other block").isTrue();
            assertThat(e.allowed(Endpoint.pod(XA, IpAddress.parse("fd00::1:1")), Endpoint.external("fd00::2:9"), 80, Protocol.TCP)
                    .allowed()).isTrue();
            assertThat(e.allowed(Endpoint.pod(XA, IpAddress.parse("fd00::1:1")), Endpoint.external("fd00::3:9"), 80, Protocol.TCP)
                    .allowed()).isFalse();
        }

        @Test
        void anIpv4BlockNeverMatchesAnIpv6Address() {
            ReferenceEvaluator e = with(policy("x", "p").types("Egress").egress(rule(peers(block("0.0.0.0/0")), null)).build());
            assertThat(e.allowed(XA, YA, false, 80, Protocol.TCP).allowed()).isTrue();
            assertThat(e.allowed(XA, YA, true, 80, Protocol.TCP).allowed()).isFalse();
        }

        @Test
        void externalAddressesMatchOnlyIpBlocks() {
            ReferenceEvaluator e = with(policy("x", "p").ingress(rule(peers(namespaces(match())), null)).build());
            Verdict v = e.allowed(Endpoint.external("203.0.113.5"), Endpoint.pod(XA, IpAddress.parse("10.1.0.1")), 80, Protocol.TCP);
            assertThat(v.allowed()).isFalse();
            assertThat(v.egress().pod()).isNull();
        }
    }

    @Nested
    class Ports {
        @Test
        void namedPortResolvesOnTheTargetPodForIngress() {
            ReferenceEvaluator e = with(policy("x", "p").ingress(rule(null, ports(named(null, "http")))).build());
            assertThat(tcp(e, YA, XA, 80)).as("x/a serves http on 80").isTrue();
            assertThat(tcp(e, YA, XB, 80)).as("x/b serves http on 8080").isFalse();
            assertThat(tcp(e, YA, XB, 8080)).isTrue();
        }

        @Test
        void namedPortResolvesOnTheDestinationForEgress() {
            ReferenceEvaluator e = with(policy("x", "p").types("Egress").egress(rule(null, ports(named("TCP", "http")))).build());
            assertThat(tcp(e, XA, XB, 8080)).isTrue();
            assertThat(tcp(e, XA, XB, 80)).isFalse();
            assertThat(tcp(e, XA, YA, 80)).isTrue();
            assertThat(tcp(e, XA, YC, 80)).as("y/c declares no http port").isFalse();
            assertThat(e.allowed(Endpoint.pod(XA, IpAddress.parse("10.1.0.1")), Endpoint.external("198.51.100.1"), 80, Protocol.TCP)
                    .allowed()).as("an address outside the cluster has no named ports").isFalse();
        }

        @Test
        void namedPortMustMatchTheProtocolToo() {
            ReferenceEvaluator e = with(policy("x", "p").ingress(rule(null, ports(named("TCP", "dns")))).build());
            assertThat(e.allowed(YA, XA, false, 53, Protocol.UDP).allowed()).as("the rule says TCP").isFalse();
            assertThat(e.allowed(YA, XA, false, 53, Protocol.TCP).allowed()).as("x/a has dns only on UDP").isFalse();
            ReferenceEvaluator udp = with(policy("x", "p").ingress(rule(null, ports(named("UDP", "dns")))).build());
            assertThat(udp.allowed(YA, XA, false, 53, Protocol.UDP).allowed()).isTrue();
        }

        @Test
        void endPortRangeIsInclusiveAtBothEnds() {
            ReferenceEvaluator e = with(policy("x", "p").ingress(rule(null, ports(range("TCP", 53, 80)))).build());
            assertThat(tcp(e, YA, XA, 52)).isFalse();
            assertThat(tcp(e, YA, XA, 53)).isTrue();
            assertThat(tcp(e, YA, XA, 80)).isTrue();
            assertThat(tcp(e, YA, XA, 81)).isFalse();
            assertThat(e.allowed(YA, XA, false, 60, Protocol.UDP).allowed()).isFalse();
        }

        @Test
        void protocolOnlyPortAdmitsEveryPortOfThatProtocol() {
            ReferenceEvaluator e = with(policy("x", "p").ingress(rule(null, ports(anyPortOf("UDP")))).build());
            assertThat(e.allowed(YA, XA, false, 1, Protocol.UDP).allowed()).isTrue();
            assertThat(e.allowed(YA, XA, false, 65535, Protocol.UDP).allowed()).isTrue();
            assertThat(tcp(e, YA, XA, 80)).isFalse();
        }

        @Test
        void portWithoutProtocolIsTcp() {
            ReferenceEvaluator e = with(policy("x", "p").ingress(rule(null, ports(port(null, 80)))).build());
            assertThat(tcp(e, YA, XA, 80)).isTrue();
            assertThat(e.allowed(YA, XA, false, 80, Protocol.UDP).allowed()).isFalse();
            assertThat(e.allowed(YA, XA, false, 80, Protocol.SCTP).allowed()).isFalse();
        }

        @Test
        void sctpIsJudgedLikeAnyOtherProtocol() {
            ReferenceEvaluator e = with(policy("x", "p").ingress(rule(null, ports(port("SCTP", 80)))).build());
            assertThat(e.allowed(YA, XA, false, 80, Protocol.SCTP).allowed()).isTrue();
            assertThat(tcp(e, YA, XA, 80)).isFalse();
        }
    }

    @Nested
    class Pods {
        @Test
        void hostNetworkPodsAreNotTargets() {
            ReferenceEvaluator e = with(policy("x", "deny").select(match("pod", "a")).types("Ingress", "Egress").build());
            Verdict toHost = e.allowed(Endpoint.pod(YA, IpAddress.parse("10.2.0.1")),
                    Endpoint.pod(HOST, IpAddress.parse("192.168.0.10")), 80, Protocol.TCP);
            assertThat(toHost.allowed()).isTrue();
            assertThat(toHost.ingress().pod()).isNull();
            assertThat(tcp(e, YA, XA, 80)).as("x/a, same labels, is isolated").isFalse();
        }

        @Test
        void hostNetworkPodsAreNotPodSelectorPeers() {
            ReferenceEvaluator e = with(policy("x", "p").select(match("pod", "b")).ingress(rule(peers(pods(match("pod", "a"))), null)).build());
            Verdict fromHost = e.allowed(Endpoint.pod(HOST, IpAddress.parse("192.168.0.10")),
                    Endpoint.pod(XB, IpAddress.parse("10.1.0.2")), 8080, Protocol.TCP);
            assertThat(fromHost.allowed()).as("judged by the node address only").isFalse();
            assertThat(tcp(e, XA, XB, 8080)).isTrue();
        }

        @Test
        void aPodWithoutAnAddressCannotBeAskedAbout() {
            ReferenceEvaluator e = with();
            assertThatThrownBy(() -> e.allowed(NEW, XA, false, 80, Protocol.TCP))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("x/new has no IPv4 address");
        }

        @Test
        void terminalPodsAreNeitherTargetsNorPeers() {
            List<ClusterEvent> events = new ArrayList<>(MODEL);
            events.add(new ClusterEvent.PodUpserted(Pod.builder("x", "done").labels(labels("pod", "a"))
                    .phase(PodPhase.SUCCEEDED).ip("10.1.0.9").build()));
            events.add(new ClusterEvent.PolicyUpserted(policy("x", "p").select(match("pod", "b"))
                    .ingress(rule(peers(pods(match("pod", "a"))), null)).build()));
            events.add(new ClusterEvent.PolicyUpserted(policy("x", "deny-a").select(match("pod", "a")).build()));
            ReferenceEvaluator e = new ReferenceEvaluator(ClusterState.EMPTY.applyAll(events));
            Verdict fromDone = e.allowed(Endpoint.pod(PodKey.parse("x/done"), IpAddress.parse("10.1.0.9")),
                    Endpoint.pod(XB, IpAddress.parse("10.1.0.2")), 8080, Protocol.TCP);
            assertThat(fromDone.allowed()).isFalse();
            Verdict toDone = e.allowed(Endpoint.pod(YA, IpAddress.parse("10.2.0.1")),
                    Endpoint.pod(PodKey.parse("x/done"), IpAddress.parse("10.1.0.9")), 80, Protocol.TCP);
            assertThat(toDone.ingress().isolated()).isFalse();
        }

        @Test
        void aSharedAddressBelongsToTheLeastPodByName() {
            List<ClusterEvent> events = new ArrayList<>(MODEL);
            // x/zz claims x/b's address: x/b < x/zz, so the address is x/b's.
            events.add(new ClusterEvent.PodUpserted(Pod.builder("x", "zz").labels(labels("pod", "zz")).ip("10.1.0.2").build()));
            events.add(new ClusterEvent.PolicyUpserted(policy("x", "p").select(match("pod", "a"))
                    .ingress(rule(peers(pods(match("pod", "zz"))), null)).build()));
            ReferenceEvaluator e = new ReferenceEvaluator(ClusterState.EMPTY.applyAll(events));
            Verdict v = e.allowed(Endpoint.pod(PodKey.parse("x/zz"), IpAddress.parse("10.1.0.2")),
                    Endpoint.pod(XA, IpAddress.parse("10.1.0.1")), 80, Protocol.TCP);
            assertThat(v.allowed()).as("the packet looks like x/b's").isFalse();
        }
    }

    @Nested
    class Reasons {
        @Test
        void theVerdictNamesEveryPolicyThatIsolatesAndEveryRuleThatAdmits() {
            ReferenceEvaluator e = with(
                    policy("x", "deny").build(),
                    policy("x", "from-y").ingress(rule(null, ports(port("UDP", 1))), rule(peers(namespaces(match("team", "b"))), null)).build(),
                    policy("x", "from-a").select(match("pod", "a")).ingress(rule(peers(namespaces(match())), ports(port("TCP", 80)))).build());
            Verdict v = e.allowed(YA, XA, false, 80, Protocol.TCP);
            assertThat(v.allowed()).isTrue();
            assertThat(v.ingress().pod()).isEqualTo(XA);
            assertThat(v.ingress().isolatedBy()).containsExactly(
                    new PolicyKey("x", "deny"), new PolicyKey("x", "from-a"), new PolicyKey("x", "from-y"));
            assertThat(v.ingress().allowedBy()).containsExactly(
                    new RuleRef(new PolicyKey("x", "from-a"), Direction.INGRESS, 0),
                    new RuleRef(new PolicyKey("x", "from-y"), Direction.INGRESS, 1));
            assertThat(v.explain()).contains("ALLOWED").contains("x/from-y spec.ingress[1]");
        }

        @Test
        void aDeniedVerdictSaysWhichPoliciesIsolate() {
            Verdict v = with(policy("x", "deny").build()).allowed(YA, XA, false, 80, Protocol.TCP);
            assertThat(v.allowed()).isFalse();
            assertThat(v.explain()).contains("DENIED").contains("isolated by [x/deny]");
        }

        @Test
        void unionOfPoliciesAllowsWhatAnyOneAllows() {
            ReferenceEvaluator e = with(
                    policy("x", "only-a").ingress(rule(peers(pods(match("pod", "a"))), null)).build(),
                    policy("x", "only-y").ingress(rule(peers(namespaces(match("team", "b"))), null)).build());
            assertThat(tcp(e, XA, XB, 8080)).isTrue();
            assertThat(tcp(e, YC, XB, 8080)).isTrue();
        }
    }
}
