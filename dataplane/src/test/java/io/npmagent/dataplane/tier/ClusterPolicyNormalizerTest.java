package io.npmagent.dataplane.tier;

import static io.npmagent.dataplane.model.ClusterPolicyFixtures.accept;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.admin;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.baseline;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.deny;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.domainNames;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.from;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.inNamespaces;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.named;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.namedPort;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.networks;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.nodes;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.number;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.pass;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.podsIn;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.rule;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.sctp;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.tcp;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.tcpRange;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.to;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.transport;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.udp;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.udpRange;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.unknownPeer;
import static io.npmagent.dataplane.model.PolicyFixtures.expression;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.ClusterNetworkPolicy;
import io.npmagent.dataplane.model.ClusterNetworkPolicy.Peer;
import io.npmagent.dataplane.model.ClusterNetworkPolicy.Port;
import io.npmagent.dataplane.model.ClusterNetworkPolicy.PortRange;
import io.npmagent.dataplane.model.ClusterNetworkPolicy.ProtocolMatch;
import io.npmagent.dataplane.model.ClusterNetworkPolicy.Rule;
import io.npmagent.dataplane.model.ClusterNetworkPolicy.TransportMatch;
import io.npmagent.dataplane.model.ClusterPolicyFixtures;
import io.npmagent.dataplane.model.FieldErrors;
import io.npmagent.dataplane.model.LabelSelector;
import io.npmagent.dataplane.model.ObjectRef;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.model.Selector;
import io.npmagent.dataplane.model.Tier;
import io.npmagent.dataplane.model.ValidationError;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Validation of ClusterNetworkPolicies as the v1beta1 CRD has it, and what each invalid part is read as. */
class ClusterPolicyNormalizerTest {
    private static final String NAME = "p";
    private static final String HOSTILE = "x\"\nClusterNetworkPolicy forged: spec: fine";

    private static final Peer ANY_POD = inNamespaces(match());
    private static final LabelSelector BAD_OPERATOR =
            new LabelSelector(java.util.Map.of(), List.of(new LabelSelector.Requirement("app", "Equals", List.of("a"))));

    /** A valid Admin policy, priority 10, for every pod, with these ingress rules. */
    private static ClusterNetworkPolicy ingress(Rule... rules) {
        return admin(NAME, 10).subjectNamespaces(match()).ingress(rules).build();
    }

    /** A valid Admin policy, priority 10, for every pod, with these egress rules. */
    private static ClusterNetworkPolicy egress(Rule... rules) {
        return admin(NAME, 10).subjectNamespaces(match()).egress(rules).build();
    }

    private static Rule denyTo(Peer peer) {
        return deny(to(peer));
    }

    private static Rule denyAnyWith(ProtocolMatch... protocols) {
        return deny(to(ANY_POD), protocols);
    }

    private static ProtocolMatch tcpPort(Integer number, Integer start, Integer end) {
        return transport("TCP", new Port(number, start == null && end == null ? null : new PortRange(start, end)));
    }

    private static List<Rule> times(int n, Rule rule) {
        return Collections.nCopies(n, rule);
    }

    private static List<String> cidrs(int n) {
        return IntStream.range(0, n).mapToObj(i -> "10.0." + i + ".0/24").toList();
    }

    static Stream<Arguments> invalid() {
        return Stream.of(
                // the policy
                Arguments.of("tier absent", ClusterPolicyFixtures.cnp(NAME).priority(1).subjectNamespaces(match()).build(),
                        "spec.tier", "required"),
                Arguments.of("tier in the wrong case", ClusterPolicyFixtures.cnp(NAME).tier("admin").priority(1)
                        .subjectNamespaces(match()).build(), "spec.tier", "unsupported value \"admin\" (Admin or Baseline)"),
                Arguments.of("the NetworkPolicy tier", ClusterPolicyFixtures.cnp(NAME).tier("NetworkPolicy").priority(1)
                        .subjectNamespaces(match()).build(), "spec.tier", "unsupported value \"NetworkPolicy\""),
                Arguments.of("priority absent", ClusterPolicyFixtures.cnp(NAME).tier("Admin").subjectNamespaces(match()).build(),
                        "spec.priority", "required"),
                Arguments.of("priority below 0", admin(NAME, -1).subjectNamespaces(match()).build(),
                        "spec.priority", "-1 must be between 0 and 1000"),
                Arguments.of("priority above 1000", baseline(NAME, 1001).subjectNamespaces(match()).build(),
                        "spec.priority", "1001 must be between 0 and 1000"),
                Arguments.of("subject absent", admin(NAME, 1).build(), "spec.subject", "required"),
                Arguments.of("subject empty", admin(NAME, 1).subject(new ClusterNetworkPolicy.Subject(null, null)).build(),
                        "spec.subject", "exactly one of namespaces and pods"),
                Arguments.of("subject with both", admin(NAME, 1).subject(new ClusterNetworkPolicy.Subject(match(),
                        new ClusterNetworkPolicy.NamespacedPods(match(), match()))).build(),
                        "spec.subject", "exactly one of namespaces and pods"),
                Arguments.of("subject pods without podSelector", admin(NAME, 1).subjectPods(match(), null).build(),
                        "spec.subject.pods.podSelector", "required"),
                Arguments.of("subject selector unreadable", admin(NAME, 1).subjectNamespaces(BAD_OPERATOR).build(),
                        "spec.subject.namespaces.matchExpressions[0].operator", "unknown operator \"Equals\""),
                Arguments.of("26 ingress rules", admin(NAME, 1).subjectNamespaces(match())
                        .ingress(times(26, deny(from(ANY_POD))).toArray(Rule[]::new)).build(),
                        "spec.ingress", "at most 25 items, has 26"),
                Arguments.of("26 egress rules", admin(NAME, 1).subjectNamespaces(match())
                        .egress(times(26, deny(to(ANY_POD))).toArray(Rule[]::new)).build(),
                        "spec.egress", "at most 25 items, has 26"),
                // a rule
                Arguments.of("rule null", egress((Rule) null), "spec.egress[0]", "must specify action and to"),
                Arguments.of("action absent", ingress(rule(null, from(ANY_POD))), "spec.ingress[0].action", "required"),
                Arguments.of("ANP's old Allow", ingress(rule("Allow", from(ANY_POD))), "spec.ingress[0].action",
                        "unsupported value \"Allow\" (Accept, Deny or Pass)"),
                Arguments.of("name of 101 characters", ingress(named("n".repeat(101), deny(from(ANY_POD)))),
                        "spec.ingress[0].name", "no more than 100 characters"),
                Arguments.of("from absent", ingress(deny(null)), "spec.ingress[0].from", "required"),
                Arguments.of("from empty", ingress(deny(from())), "spec.ingress[0].from", "between 1 and 25 items, has 0"),
                Arguments.of("26 peers", egress(deny(Collections.nCopies(26, ANY_POD))), "spec.egress[0].to",
                        "between 1 and 25 items, has 26"),
                Arguments.of("protocols empty", ingress(new Rule(null, "Deny", from(ANY_POD), List.of())),
                        "spec.ingress[0].protocols", "between 1 and 25 items when present, has 0"),
                Arguments.of("26 protocols", ingress(new Rule(null, "Deny", from(ANY_POD), Collections.nCopies(26, tcp(80)))),
                        "spec.ingress[0].protocols", "has 26"),
                // a peer
                Arguments.of("peer null", egress(deny(Arrays.asList((Peer) null))), "spec.egress[0].to[0]", "exactly one of"),
                Arguments.of("peer of unknown kind", egress(denyTo(unknownPeer())), "spec.egress[0].to[0]",
                        "a peer kind this agent does not know"),
                Arguments.of("peer of two kinds", egress(denyTo(new Peer(match(), null, match(), null, null))),
                        "spec.egress[0].to[0]", "has namespaces and nodes"),
                Arguments.of("domainNames", egress(accept(to(ANY_POD)), accept(to(ANY_POD)),
                        accept(to(domainNames("kubernetes.io")))), "spec.egress[2].to[0].domainNames",
                        "domainNames peers are not supported by npm-agent"),
                Arguments.of("networks on ingress", ingress(deny(from(networks("10.0.0.0/8")))),
                        "spec.ingress[0].from[0].networks", "not allowed in an ingress peer"),
                Arguments.of("nodes on ingress", ingress(deny(from(nodes(match())))),
                        "spec.ingress[0].from[0].nodes", "not allowed in an ingress peer"),
                Arguments.of("domainNames on ingress", ingress(deny(from(domainNames("kubernetes.io")))),
                        "spec.ingress[0].from[0].domainNames", "not allowed in an ingress peer"),
                Arguments.of("pods peer without podSelector", egress(denyTo(podsIn(match(), null))),
                        "spec.egress[0].to[0].pods.podSelector", "required"),
                Arguments.of("pods peer, bad namespaceSelector", ingress(deny(from(podsIn(BAD_OPERATOR, match())))),
                        "spec.ingress[0].from[0].pods.namespaceSelector.matchExpressions[0].operator", "unknown operator"),
                Arguments.of("namespaces peer, bad label value", ingress(deny(from(inNamespaces(match("team", "a b"))))),
                        "spec.ingress[0].from[0].namespaces.matchLabels[\"team\"]", "label value \"a b\""),
                Arguments.of("nodes peer, bad key", egress(denyTo(nodes(match("-role", "x")))),
                        "spec.egress[0].to[0].nodes.matchLabels", "label key \"-role\""),
                // networks
                Arguments.of("networks empty", egress(denyTo(new Peer(null, null, null, List.of(), null))),
                        "spec.egress[0].to[0].networks", "between 1 and 25 items, has 0"),
                Arguments.of("26 networks", egress(denyTo(new Peer(null, null, null, cidrs(26), null))),
                        "spec.egress[0].to[0].networks", "has 26"),
                Arguments.of("a network twice", egress(denyTo(networks("10.0.0.0/8", "10.0.0.0/8"))),
                        "spec.egress[0].to[0].networks[1]", "duplicate value \"10.0.0.0/8\""),
                Arguments.of("host bits set", egress(denyTo(networks("10.0.0.0/8", "10.1.2.3/8"))),
                        "spec.egress[0].to[0].networks[1]", "has host bits set (the network is 10.0.0.0/8)"),
                Arguments.of("IPv6 host bits set", egress(denyTo(networks("fd00::1/64"))),
                        "spec.egress[0].to[0].networks[0]", "host bits"),
                Arguments.of("no prefix length", egress(denyTo(networks("10.0.0.1"))),
                        "spec.egress[0].to[0].networks[0]", "Invalid CIDR format provided"),
                Arguments.of("not an address", egress(denyTo(networks("example.com/8"))),
                        "spec.egress[0].to[0].networks[0]", "Invalid CIDR format provided"),
                Arguments.of("prefix too long", egress(denyTo(networks("10.0.0.0/33"))),
                        "spec.egress[0].to[0].networks[0]", "Invalid CIDR format provided"),
                Arguments.of("an octet with a leading zero", egress(denyTo(networks("010.0.0.0/8"))),
                        "spec.egress[0].to[0].networks[0]", "leading zero"),
                Arguments.of("a prefix length with a leading zero", egress(denyTo(networks("fd00::/08"))),
                        "spec.egress[0].to[0].networks[0]", "leading zero"),
                Arguments.of("44 characters", egress(denyTo(networks("0000:0000:0000:0000:0000:0000:0000:0000/0000"))),
                        "spec.egress[0].to[0].networks[0]", "no more than 43 characters"),
                // protocols
                Arguments.of("protocol null", ingress(new Rule(null, "Deny", from(ANY_POD), Arrays.asList((ProtocolMatch) null))),
                        "spec.ingress[0].protocols[0]", "exactly one of tcp, udp, sctp and destinationNamedPort"),
                Arguments.of("protocol of unknown kind", ingress(deny(from(ANY_POD), new ProtocolMatch(null, null, null, null))),
                        "spec.ingress[0].protocols[0]", "a protocol this agent does not know"),
                Arguments.of("empty named port is absent", ingress(deny(from(ANY_POD), namedPort(""))),
                        "spec.ingress[0].protocols[0]", "sets none of"),
                Arguments.of("tcp and udp in one entry", ingress(deny(from(ANY_POD),
                        new ProtocolMatch(new TransportMatch(number(1)), new TransportMatch(number(1)), null, null))),
                        "spec.ingress[0].protocols[0]", "exactly one of"),
                Arguments.of("tcp: {}", ingress(deny(from(ANY_POD), transport("TCP", null))),
                        "spec.ingress[0].protocols[0].tcp", "must specify destinationPort"),
                Arguments.of("udp: {}", ingress(deny(from(ANY_POD), transport("UDP", null))),
                        "spec.ingress[0].protocols[0].udp", "must specify destinationPort"),
                Arguments.of("port with number and range", ingress(deny(from(ANY_POD), tcpPort(80, 1, 2))),
                        "spec.ingress[0].protocols[0].tcp.destinationPort", "exactly one of number and range"),
                Arguments.of("port with neither", ingress(deny(from(ANY_POD), tcpPort(null, null, null))),
                        "spec.ingress[0].protocols[0].tcp.destinationPort", "exactly one of number and range"),
                Arguments.of("port 0", ingress(deny(from(ANY_POD), tcp(0))),
                        "spec.ingress[0].protocols[0].tcp.destinationPort.number", "port 0 must be between 1 and 65535"),
                Arguments.of("port 65536", ingress(deny(from(ANY_POD), sctp(65536))),
                        "spec.ingress[0].protocols[0].sctp.destinationPort.number", "port 65536"),
                Arguments.of("range without start", ingress(deny(from(ANY_POD), tcpPort(null, null, 9))),
                        "spec.ingress[0].protocols[0].tcp.destinationPort.range.start", "required"),
                Arguments.of("range without end", ingress(deny(from(ANY_POD), tcpPort(null, 9, null))),
                        "spec.ingress[0].protocols[0].tcp.destinationPort.range.end", "required"),
                Arguments.of("range end above 65535", ingress(deny(from(ANY_POD), udpRange(1, 70000))),
                        "spec.ingress[0].protocols[0].udp.destinationPort.range.end", "port 70000"),
                Arguments.of("range of one port", ingress(deny(from(ANY_POD), tcpRange(80, 80))),
                        "spec.ingress[0].protocols[0].tcp.destinationPort.range", "Start port must be less than End port"),
                Arguments.of("range backwards", ingress(deny(from(ANY_POD), tcpRange(81, 80))),
                        "spec.ingress[0].protocols[0].tcp.destinationPort.range", "Start port must be less than End port"),
                // the CRD's CEL rule on egress rules
                Arguments.of("networks with a named port", egress(deny(to(networks("10.0.0.0/8")), namedPort("http"))),
                        "spec.egress[0]", "networks/nodes/domainNames peer cannot be set with namedPorts"),
                Arguments.of("nodes beside pods with a named port", egress(deny(to(ANY_POD, nodes(match())), tcp(1), namedPort("http"))),
                        "spec.egress[0]", "cannot be set with namedPorts"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalid")
    void anErrorNamesThePolicyAndTheField(String what, ClusterNetworkPolicy policy, String field, String reason) {
        NormalizedClusterPolicy n = ClusterPolicyNormalizer.normalize(policy);
        assertThat(n.valid()).isFalse();
        assertThat(n.errors()).allSatisfy(e -> assertThat(e.object()).isEqualTo(ObjectRef.clusterNetworkPolicy(NAME)));
        assertThat(n.errors()).as(what)
                .anySatisfy(e -> {
                    assertThat(e.field()).isEqualTo(field);
                    assertThat(e.reason()).contains(reason);
                });
        assertThat(n.errors().get(0).toString()).startsWith("ClusterNetworkPolicy p: ");
    }

    @Nested
    class Valid {
        @Test
        void aValidPolicyIsReadAsWritten() {
            ClusterNetworkPolicy p = baseline("web", 1000).subjectPods(match("team", "a"), match("app", "web"))
                    .ingress(named("from-b", accept(from(inNamespaces(match("team", "b")), podsIn(match(), match("app", "api"))),
                            tcp(80), udpRange(5000, 5010), namedPort("metrics"))))
                    .egress(pass(to(networks("10.0.0.0/8", "fd00::/8"), nodes(match("role", "worker")))),
                            deny(to(ANY_POD)))
                    .build();
            NormalizedClusterPolicy n = ClusterPolicyNormalizer.normalize(p);
            assertThat(n.errors()).isEmpty();
            assertThat(n.name()).isEqualTo("web");
            assertThat(n.tiers()).containsExactly(Tier.BASELINE);
            assertThat(n.priority()).isEqualTo(1000);
            assertThat(n.subject()).isEqualTo(new ClusterSubject(selector(match("team", "a")), selector(match("app", "web"))));
            assertThat(n.ingress()).containsExactly(new ClusterRule(0, "from-b", RuleAction.ACCEPT, false,
                    List.of(new ClusterPeer.Pods(selector(match("team", "b")), Selector.ALL),
                            new ClusterPeer.Pods(Selector.ALL, selector(match("app", "api")))),
                    false,
                    List.of(ClusterPort.Range.single(Protocol.TCP, 80), new ClusterPort.Range(Protocol.UDP, 5000, 5010),
                            new ClusterPort.Named("metrics")),
                    false));
            assertThat(n.egress()).containsExactly(
                    new ClusterRule(0, null, RuleAction.PASS, false, List.of(
                            new ClusterPeer.Network(Cidr.parse("10.0.0.0/8")), new ClusterPeer.Network(Cidr.parse("fd00::/8")),
                            new ClusterPeer.Nodes(selector(match("role", "worker")))), true, List.of(), false),
                    new ClusterRule(1, null, RuleAction.DENY, false, List.of(new ClusterPeer.Pods(Selector.ALL, Selector.ALL)),
                            true, List.of(), false));
        }

        @Test
        void theBoundsThemselvesAreValid() {
            Rule longest = named("n".repeat(100), deny(Collections.nCopies(25, ANY_POD), Collections.nCopies(25, tcp(65535))
                    .toArray(ProtocolMatch[]::new)));
            ClusterNetworkPolicy p = admin(NAME, 0).subjectNamespaces(match())
                    .ingress(times(25, longest).toArray(Rule[]::new))
                    .egress(deny(to(new Peer(null, null, null, cidrs(25), null)), tcpRange(1, 65535)),
                            deny(to(networks("0.0.0.0/0", "::/0", "10.0.0.0/8", "100.64.0.0/10",
                                    "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fff0/124"))))
                    .build();
            assertThat(ClusterPolicyNormalizer.normalize(p).errors()).isEmpty();
        }

        @Test
        void aNamedPortIsValidOnIngressAndOnEgressToPods() {
            assertThat(ClusterPolicyNormalizer.normalize(ingress(deny(from(ANY_POD), namedPort("http")))).errors()).isEmpty();
            assertThat(ClusterPolicyNormalizer.normalize(egress(deny(to(podsIn(match(), match())), namedPort("http")))).errors())
                    .isEmpty();
        }

        @Test
        void aNamespacesSubjectSelectsEveryPodOfItsNamespaces() {
            NormalizedClusterPolicy n = ClusterPolicyNormalizer.normalize(admin(NAME, 3).subjectNamespaces(match("team", "a")).build());
            assertThat(n.subject()).isEqualTo(new ClusterSubject(selector(match("team", "a")), Selector.ALL));
            assertThat(n.ingress()).isEmpty();
            assertThat(n.egress()).isEmpty();
        }
    }

    @Nested
    class FailingClosed {
        @Test
        void anInvalidAcceptRuleIsLeftOutAndTheOthersKeepTheirIndex() {
            NormalizedClusterPolicy n = ClusterPolicyNormalizer.normalize(egress(
                    accept(to(domainNames("kubernetes.io"), ANY_POD)),
                    deny(to(ANY_POD))));
            assertThat(n.egress()).extracting(ClusterRule::index).containsExactly(1);
            assertThat(n.egress().get(0).failedClosed()).isFalse();
            assertThat(n.errors()).anySatisfy(e -> {
                assertThat(e.field()).isEqualTo("spec.egress[0]");
                assertThat(e.reason()).contains("this Accept rule matches nothing");
            });
        }

        @Test
        void anInvalidDenyPassOrUnknownRuleDeniesEverything() {
            NormalizedClusterPolicy n = ClusterPolicyNormalizer.normalize(egress(
                    named("d", deny(to(networks("10.0.0.1/8")))),
                    named("p", pass(to(unknownPeer()))),
                    named("u", rule("Drop", to(ANY_POD))),
                    null));
            assertThat(n.egress()).containsExactly(
                    ClusterRule.denyEverything(0, "d"),
                    ClusterRule.denyEverything(1, "p"),
                    ClusterRule.denyEverything(2, "u"),
                    ClusterRule.denyEverything(3, null));
            assertThat(n.egress()).allSatisfy(r -> {
                assertThat(r.anyPeer()).isTrue();
                assertThat(r.anyPort()).isTrue();
                assertThat(r.failedClosed()).isTrue();
            });
        }

        @Test
        void aDomainNamesPeerIsRefusedAndItsDenyRuleDeniesEverything() {
            NormalizedClusterPolicy n = ClusterPolicyNormalizer.normalize(egress(
                    accept(to(ANY_POD)), accept(to(ANY_POD)), deny(to(domainNames("*.example.com")))));
            assertThat(n.egress()).element(2).isEqualTo(ClusterRule.denyEverything(2, null));
            assertThat(n.errors()).extracting(ValidationError::field)
                    .containsExactly("spec.egress[2].to[0].domainNames", "spec.egress[2]");
            assertThat(n.errors().get(0).toString())
                    .startsWith("ClusterNetworkPolicy p: spec.egress[2].to[0].domainNames: domainNames peers are not supported");
        }

        @Test
        void anErrorInThePolicyMakesItDenyOnly() {
            ClusterNetworkPolicy p = ClusterPolicyFixtures.cnp(NAME).tier("Bogus").priority(5000).subjectNamespaces(match())
                    .ingress(accept(from(ANY_POD)), pass(from(inNamespaces(match("team", "b"))), tcp(80)), deny(from(ANY_POD)),
                            pass(from(unknownPeer())))
                    .build();
            NormalizedClusterPolicy n = ClusterPolicyNormalizer.normalize(p);
            assertThat(n.tiers()).containsExactly(Tier.ADMIN, Tier.BASELINE);
            assertThat(n.priority()).isZero();
            Selector teamB = selector(match("team", "b"));
            assertThat(n.ingress()).containsExactly(
                    new ClusterRule(1, null, RuleAction.DENY, false, List.of(new ClusterPeer.Pods(teamB, Selector.ALL)), false,
                            List.of(ClusterPort.Range.single(Protocol.TCP, 80)), true),
                    new ClusterRule(2, null, RuleAction.DENY, false, List.of(new ClusterPeer.Pods(Selector.ALL, Selector.ALL)), true,
                            List.of(), false),
                    ClusterRule.denyEverything(3, null));
            assertThat(n.errors()).extracting(ValidationError::field).contains("spec.tier", "spec.priority");
            assertThat(n.errors()).filteredOn(e -> e.field().equals("spec.tier")).singleElement()
                    .satisfies(e -> assertThat(e.reason()).contains("only denies").contains("in both tiers"));
        }

        @Test
        void anUnreadableSubjectSelectorMatchesEverythingButOnlyThatSelector() {
            NormalizedClusterPolicy n = ClusterPolicyNormalizer.normalize(
                    admin(NAME, 1).subjectPods(match("team", "a"), BAD_OPERATOR).ingress(accept(from(ANY_POD))).build());
            assertThat(n.subject()).isEqualTo(new ClusterSubject(selector(match("team", "a")), Selector.ALL));
            assertThat(n.ingress()).as("deny-only: the Accept is gone").isEmpty();
            assertThat(ClusterPolicyNormalizer.normalize(admin(NAME, 1).subjectNamespaces(BAD_OPERATOR).build()).subject())
                    .isEqualTo(ClusterSubject.EVERY_POD);
            assertThat(ClusterPolicyNormalizer.normalize(admin(NAME, 1).build()).subject()).isEqualTo(ClusterSubject.EVERY_POD);
        }

        @Test
        void aValidPolicyHasNoRuleFailedClosed() {
            NormalizedClusterPolicy n = ClusterPolicyNormalizer.normalize(ingress(accept(from(ANY_POD)), pass(from(ANY_POD)), deny(from(ANY_POD))));
            assertThat(n.ingress()).extracting(ClusterRule::action)
                    .containsExactly(RuleAction.ACCEPT, RuleAction.PASS, RuleAction.DENY);
            assertThat(n.ingress()).noneMatch(ClusterRule::failedClosed);
        }

        @Test
        void hostileTextIsQuotedInMessages() {
            NormalizedClusterPolicy n = ClusterPolicyNormalizer.normalize(ingress(rule(HOSTILE, from(ANY_POD))));
            assertThat(n.errors()).allSatisfy(e -> assertThat(e.toString()).doesNotContain("\n"));
            assertThat(n.errors().get(0).reason()).contains("\\n");
        }
    }

    private static Selector selector(LabelSelector raw) {
        Selector s = Selector.parse(raw, "test", new FieldErrors(ObjectRef.clusterNetworkPolicy("test")));
        assertThat(s).isNotNull();
        return s;
    }

    @Test
    void theBadOperatorFixtureIsItselfInvalid() {
        FieldErrors errors = new FieldErrors(ObjectRef.clusterNetworkPolicy("test"));
        assertThat(Selector.parse(BAD_OPERATOR, "f", errors)).isNull();
        assertThat(Selector.parse(expression("pod", "in", "a"), "f", errors)).isNull();
        assertThat(errors.count()).isEqualTo(2);
    }
}
