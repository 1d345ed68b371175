package io.npmagent.dataplane.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.desired.CompiledRule;
import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.desired.PeerSetKey.CidrPeers;
import io.npmagent.dataplane.desired.PeerSetKey.SelectorPeers;
import io.npmagent.dataplane.desired.PortMatch;
import io.npmagent.dataplane.desired.PortMatch.NamedPort;
import io.npmagent.dataplane.desired.PortMatch.PortRange;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.FieldErrors;
import io.npmagent.dataplane.model.LabelSelector;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.NetworkPolicy.IpBlock;
import io.npmagent.dataplane.model.NetworkPolicy.Peer;
import io.npmagent.dataplane.model.NetworkPolicy.Port;
import io.npmagent.dataplane.model.NetworkPolicy.PortValue;
import io.npmagent.dataplane.model.NetworkPolicy.Rule;
import io.npmagent.dataplane.model.ObjectRef;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.model.Selector;
import io.npmagent.dataplane.model.ValidationError;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class PolicyNormalizerTest {

    private static final String NS = "x";
    private static final String OBJECT = "NetworkPolicy x/p";
    private static final String HOSTILE = "x\"\nNetworkPolicy y/z: forged";

    private static final LabelSelector APP_A = LabelSelector.matchLabels(Map.of("app", "a"));
    private static final LabelSelector TEAM_B = LabelSelector.matchLabels(Map.of("team", "b"));
    private static final LabelSelector BAD_OPERATOR =
            new LabelSelector(Map.of(), List.of(new LabelSelector.Requirement("app", "Equals", List.of("a"))));

    /** A peer that is always valid, kept beside an invalid one to show that only the invalid one goes. */
    private static final Peer GOOD_PEER = pods(APP_A);
    private static final PeerSetKey GOOD_PEER_KEY = SelectorPeers.inNamespace(NS, selector(APP_A));
    private static final Port GOOD_PORT = port("TCP", 443, null);
    private static final PortMatch GOOD_PORT_MATCH = PortRange.single(Protocol.TCP, 443);

    // ---- building policies -------------------------------------------------------------------------

    private static NetworkPolicy policy(LabelSelector podSelector, List<String> policyTypes, List<Rule> ingress,
            List<Rule> egress) {
        return new NetworkPolicy(NS, "p", podSelector, policyTypes, ingress, egress);
    }

    /** A policy with these ingress rules and everything else absent. */
    private static NetworkPolicy ingressPolicy(Rule... rules) {
        return policy(null, null, List.of(rules), null);
    }

    /** A policy with {@code policyTypes: [Egress]} and these egress rules. */
    private static NetworkPolicy egressPolicy(Rule... rules) {
        return policy(null, List.of("Egress"), null, List.of(rules));
    }

    private static Rule peers(Peer... peers) {
        return new Rule(Arrays.asList(peers), null);
    }

    private static Rule ports(Port... ports) {
        return new Rule(null, Arrays.asList(ports));
    }

    private static Peer pods(LabelSelector podSelector) {
        return new Peer(podSelector, null, null);
    }

    private static Peer namespaces(LabelSelector namespaceSelector) {
        return new Peer(null, namespaceSelector, null);
    }

    private static Peer ipBlock(String cidr, String... except) {
        return new Peer(null, null, new IpBlock(cidr, List.of(except)));
    }

    private static Port port(String protocol, Integer number, Integer endPort) {
        return new Port(protocol, number == null ? null : PortValue.number(number), endPort);
    }

    private static Port namedPort(String protocol, String name, Integer endPort) {
        return new Port(protocol, PortValue.name(name), endPort);
    }

    private static Selector selector(LabelSelector raw) {
        FieldErrors errors = new FieldErrors(ObjectRef.namespace("test"));
        Selector s = Selector.parse(raw, "test", errors);
        assertThat(errors.list()).isEmpty();
        return s;
    }

    private static CidrPeers cidrPeers(String cidr, String... except) {
        return new CidrPeers(Cidr.parse(cidr), Stream.of(except).map(Cidr::parse).toList());
    }

    // ---- checking results --------------------------------------------------------------------------

    private static NormalizedPolicy normalizeValid(NetworkPolicy policy) {
        NormalizedPolicy n = PolicyNormalizer.normalize(policy);
        assertThat(n.errors()).isEmpty();
        assertThat(n.valid()).isTrue();
        return n;
    }

    /** Normalizes a policy with exactly one problem, at {@code field}, and returns the result. */
    private static NormalizedPolicy normalizeWithError(NetworkPolicy policy, String field) {
        NormalizedPolicy n = PolicyNormalizer.normalize(policy);
        assertThat(n.valid()).isFalse();
        assertThat(n.errors()).singleElement().satisfies(e -> assertError(e, field));
        return n;
    }

    private static void assertError(ValidationError e, String field) {
        assertThat(e.object()).hasToString(OBJECT);
        assertThat(e.field()).isEqualTo(field);
        assertThat(e.reason()).isNotBlank();
        assertThat(e.toString()).startsWith(OBJECT + ": " + field + ": ").doesNotContain("\n", "\r");
    }

    private static CompiledRule onlyIngressRule(NormalizedPolicy n) {
        assertThat(n.compiled().ingress()).hasSize(1);
        return n.compiled().ingress().get(0);
    }

    private static CompiledRule rule(int index, List<PeerSetKey> peers, List<PortMatch> ports) {
        return new CompiledRule(index, peers.isEmpty(), peers, ports.isEmpty(), ports);
    }

    @Nested
    class Defaulting {

        @Test
        void validPolicyHasNoErrorsAndKeepsItsKeyAndSelector() {
            NormalizedPolicy n = normalizeValid(policy(APP_A, List.of("Ingress", "Egress"),
                    List.of(new Rule(List.of(pods(TEAM_B)), List.of(port("TCP", 80, null)))),
                    List.of(new Rule(List.of(ipBlock("10.0.0.0/8", "10.1.0.0/16")), List.of(port("UDP", 53, null))))));

            assertThat(n.key()).isEqualTo(new PolicyKey("x", "p"));
            assertThat(n.namespace()).isEqualTo("x");
            assertThat(n.podSelector()).isEqualTo(selector(APP_A));
            assertThat(n.compiled().ingress()).containsExactly(rule(0,
                    List.of(SelectorPeers.inNamespace(NS, selector(TEAM_B))),
                    List.of(PortRange.single(Protocol.TCP, 80))));
            assertThat(n.compiled().egress()).containsExactly(rule(0,
                    List.of(cidrPeers("10.0.0.0/8", "10.1.0.0/16")),
                    List.of(PortRange.single(Protocol.UDP, 53))));
        }

        @Test
        void absentPodSelectorSelectsEveryPodOfTheNamespace() {
            assertThat(normalizeValid(ingressPolicy()).podSelector()).isEqualTo(Selector.ALL);
        }

        @Test
        void absentPolicyTypesWithoutEgressIsIngressOnly() {
            NormalizedPolicy n = normalizeValid(policy(null, null, null, null));

            assertThat(n.compiled().directions()).containsExactly(Direction.INGRESS);
            assertThat(n.compiled().isolates(Direction.EGRESS)).isFalse();
            assertThat(n.compiled().ingress()).isEmpty();
        }

        @Test
        void absentPolicyTypesWithEgressRulesIsIngressAndEgress() {
            NormalizedPolicy n = normalizeValid(policy(null, null, null, List.of(ports(GOOD_PORT))));

            assertThat(n.compiled().directions()).containsExactlyInAnyOrder(Direction.INGRESS, Direction.EGRESS);
            assertThat(n.compiled().egress()).containsExactly(rule(0, List.of(), List.of(GOOD_PORT_MATCH)));
        }

        @Test
        void absentPolicyTypesWithAnEmptyEgressListIsIngressOnly() {
            NormalizedPolicy n = normalizeValid(policy(null, null, null, List.of()));

            assertThat(n.compiled().directions()).containsExactly(Direction.INGRESS);
        }

        @Test
        void emptyPolicyTypesListIsDefaultedLikeAnAbsentOne() {
            assertThat(normalizeValid(policy(null, List.of(), null, List.of(ports(GOOD_PORT)))).compiled().directions())
                    .containsExactlyInAnyOrder(Direction.INGRESS, Direction.EGRESS);
            assertThat(normalizeValid(policy(null, List.of(), null, null)).compiled().directions())
                    .containsExactly(Direction.INGRESS);
        }

        @Test
        void explicitEgressOnlyDoesNotCompileIngressRules() {
            NormalizedPolicy n = normalizeValid(
                    policy(null, List.of("Egress"), List.of(peers(GOOD_PEER)), List.of(ports(GOOD_PORT))));

            assertThat(n.compiled().directions()).containsExactly(Direction.EGRESS);
            assertThat(n.compiled().ingress()).isEmpty();
            assertThat(n.compiled().egress()).hasSize(1);
        }

        @Test
        void explicitIngressOnlyDoesNotCompileEgressRules() {
            NormalizedPolicy n = normalizeValid(
                    policy(null, List.of("Ingress"), List.of(peers(GOOD_PEER)), List.of(ports(GOOD_PORT))));

            assertThat(n.compiled().directions()).containsExactly(Direction.INGRESS);
            assertThat(n.compiled().egress()).isEmpty();
            assertThat(n.compiled().ingress()).hasSize(1);
        }

        @Test
        void explicitEgressWithoutEgressRulesDeniesAllEgress() {
            NormalizedPolicy n = normalizeValid(policy(null, List.of("Egress"), null, null));

            assertThat(n.compiled().isolates(Direction.EGRESS)).isTrue();
            assertThat(n.compiled().egress()).isEmpty();
        }

        @Test
        void portWithoutProtocolIsTcp() {
            CompiledRule r = onlyIngressRule(normalizeValid(ingressPolicy(ports(port(null, 80, null)))));

            assertThat(r.ports()).containsExactly(PortRange.single(Protocol.TCP, 80));
        }

        @ParameterizedTest
        @ValueSource(strings = {"TCP", "UDP", "SCTP"})
        void portEntryWithoutPortIsEveryPortOfItsProtocol(String protocol) {
            CompiledRule r = onlyIngressRule(normalizeValid(ingressPolicy(ports(port(protocol, null, null)))));

            assertThat(r.ports()).containsExactly(new PortRange(Protocol.valueOf(protocol), 0, 65535));
            assertThat(r.anyPort()).isFalse();
        }

        @Test
        void portEntryWithNeitherProtocolNorPortIsEveryTcpPort() {
            CompiledRule r = onlyIngressRule(normalizeValid(ingressPolicy(ports(port(null, null, null)))));

            assertThat(r.ports()).containsExactly(PortRange.all(Protocol.TCP));
        }

        @Test
        void endPortMakesARange() {
            CompiledRule r = onlyIngressRule(normalizeValid(ingressPolicy(
                    ports(port("UDP", 8000, 9000), port("TCP", 1, 65535), port("TCP", 22, 22)))));

            assertThat(r.ports()).containsExactly(
                    new PortRange(Protocol.UDP, 8000, 9000),
                    new PortRange(Protocol.TCP, 1, 65535),
                    PortRange.single(Protocol.TCP, 22));
        }

        @Test
        void namedPortKeepsItsNameAndProtocol() {
            CompiledRule r = onlyIngressRule(normalizeValid(ingressPolicy(
                    ports(namedPort(null, "http", null), namedPort("SCTP", "diameter", null)))));

            assertThat(r.ports()).containsExactly(new NamedPort(Protocol.TCP, "http"), new NamedPort(Protocol.SCTP, "diameter"));
        }

        @Test
        void podSelectorOnlyPeerSelectsInThePolicyNamespace() {
            CompiledRule r = onlyIngressRule(normalizeValid(ingressPolicy(peers(pods(APP_A)))));

            assertThat(r.peers()).containsExactly(SelectorPeers.inNamespace("x", selector(APP_A)));
        }

        @Test
        void emptyPodSelectorPeerIsEveryPodOfThePolicyNamespace() {
            CompiledRule r = onlyIngressRule(normalizeValid(ingressPolicy(peers(pods(LabelSelector.EMPTY)))));

            assertThat(r.peers()).containsExactly(SelectorPeers.inNamespace("x", Selector.ALL));
            assertThat(r.anyPeer()).isFalse();
        }

        @Test
        void namespaceSelectorAlonePeerIsEveryPodOfTheMatchingNamespaces() {
            CompiledRule r = onlyIngressRule(normalizeValid(ingressPolicy(peers(namespaces(TEAM_B)))));

            assertThat(r.peers()).containsExactly(SelectorPeers.acrossNamespaces(selector(TEAM_B), Selector.ALL));
        }

        @Test
        void namespaceSelectorWithPodSelectorPeerIsThosePodsOfTheMatchingNamespaces() {
            CompiledRule r = onlyIngressRule(normalizeValid(ingressPolicy(peers(new Peer(APP_A, TEAM_B, null)))));

            assertThat(r.peers()).containsExactly(SelectorPeers.acrossNamespaces(selector(TEAM_B), selector(APP_A)));
        }

        @Test
        void emptyNamespaceSelectorPeerIsEveryNamespace() {
            CompiledRule r = onlyIngressRule(normalizeValid(ingressPolicy(peers(namespaces(LabelSelector.EMPTY)))));

            assertThat(r.peers()).containsExactly(SelectorPeers.acrossNamespaces(Selector.ALL, Selector.ALL));
        }

        @Test
        void ipBlockPeerKeepsCidrAndExceptInCanonicalForm() {
            CompiledRule r = onlyIngressRule(normalizeValid(ingressPolicy(
                    peers(ipBlock("10.244.1.10/8", "10.2.0.0/16", "10.1.2.3/16"), ipBlock("2001:db8::1/32")))));

            assertThat(r.peers()).containsExactly(
                    cidrPeers("10.0.0.0/8", "10.1.0.0/16", "10.2.0.0/16"),
                    cidrPeers("2001:db8::/32"));
        }

        @Test
        void absentOrEmptyPeersAdmitAnyPeer() {
            NormalizedPolicy n = normalizeValid(ingressPolicy(
                    new Rule(null, List.of(GOOD_PORT)),
                    new Rule(List.of(), List.of(GOOD_PORT))));

            assertThat(n.compiled().ingress()).containsExactly(
                    rule(0, List.of(), List.of(GOOD_PORT_MATCH)),
                    rule(1, List.of(), List.of(GOOD_PORT_MATCH)));
            assertThat(n.compiled().ingress()).allSatisfy(r -> assertThat(r.anyPeer()).isTrue());
        }

        @Test
        void absentOrEmptyPortsAdmitAnyPort() {
            NormalizedPolicy n = normalizeValid(ingressPolicy(
                    new Rule(List.of(GOOD_PEER), null),
                    new Rule(List.of(GOOD_PEER), List.of())));

            assertThat(n.compiled().ingress()).containsExactly(
                    rule(0, List.of(GOOD_PEER_KEY), List.of()),
                    rule(1, List.of(GOOD_PEER_KEY), List.of()));
            assertThat(n.compiled().ingress()).allSatisfy(r -> assertThat(r.anyPort()).isTrue());
        }

        @Test
        void emptyRuleAdmitsEverything() {
            CompiledRule r = onlyIngressRule(normalizeValid(ingressPolicy(new Rule(null, null))));

            assertThat(r.anyPeer()).isTrue();
            assertThat(r.anyPort()).isTrue();
        }

        @Test
        void egressPeersUseTheSameDefaulting() {
            NormalizedPolicy n = normalizeValid(egressPolicy(peers(pods(APP_A), namespaces(TEAM_B))));

            assertThat(n.compiled().egress()).containsExactly(rule(0,
                    List.of(SelectorPeers.inNamespace(NS, selector(APP_A)),
                            SelectorPeers.acrossNamespaces(selector(TEAM_B), Selector.ALL)),
                    List.of()));
        }
    }

    @Nested
    class InvalidIpBlock {

        static Stream<Arguments> badCidrs() {
            return Stream.of(
                    Arguments.of("10.0.0.0/33"),
                    Arguments.of("garbage"),
                    Arguments.of("10.0.0.0"),
                    Arguments.of("::/129"),
                    Arguments.of("example.com/32"),
                    Arguments.of(""),
                    Arguments.of((Object) null));
        }

        @ParameterizedTest
        @MethodSource("badCidrs")
        void badCidrDropsThePeerAndKeepsTheOthers(String cidr) {
            NormalizedPolicy n = normalizeWithError(
                    ingressPolicy(peers(new Peer(null, null, new IpBlock(cidr, null)), GOOD_PEER)),
                    "spec.ingress[0].from[0].ipBlock.cidr");

            assertThat(onlyIngressRule(n)).isEqualTo(rule(0, List.of(GOOD_PEER_KEY), List.of()));
        }

        @Test
        void missingCidrIsReportedAsRequired() {
            NormalizedPolicy n = PolicyNormalizer.normalize(ingressPolicy(peers(new Peer(null, null, new IpBlock(null, null)))));

            assertThat(n.errors()).singleElement().extracting(ValidationError::reason).isEqualTo("required");
        }

        static Stream<Arguments> badExcepts() {
            return Stream.of(
                    Arguments.of("outside its cidr", "11.0.0.0/16"),
                    Arguments.of("equal to its cidr", "10.0.0.0/8"),
                    Arguments.of("equal to its cidr once host bits are cleared", "10.9.9.9/8"),
                    Arguments.of("wider than its cidr", "0.0.0.0/0"),
                    Arguments.of("of the other family", "2001:db8::/64"),
                    Arguments.of("of the other family, all addresses", "::/0"),
                    Arguments.of("not a cidr", "garbage"));
        }

        @ParameterizedTest(name = "except {0}: {1}")
        @MethodSource("badExcepts")
        void badExceptDropsTheWholeIpBlockNotJustTheExcept(String why, String except) {
            NormalizedPolicy n = normalizeWithError(
                    ingressPolicy(peers(ipBlock("10.0.0.0/8", "10.1.0.0/16", except), GOOD_PEER)),
                    "spec.ingress[0].from[0].ipBlock.except[1]");

            // Keeping 10.0.0.0/8 with only the valid except would admit more than was written.
            assertThat(onlyIngressRule(n).peers()).containsExactly(GOOD_PEER_KEY);
            assertThat(n.compiled().peerSets()).noneMatch(k -> k instanceof CidrPeers);
        }

        @Test
        void badExceptInAnIpv6BlockIsCaughtToo() {
            NormalizedPolicy n = normalizeWithError(
                    ingressPolicy(peers(ipBlock("2001:db8::/32", "10.0.0.0/8"), GOOD_PEER)),
                    "spec.ingress[0].from[0].ipBlock.except[0]");

            assertThat(onlyIngressRule(n).peers()).containsExactly(GOOD_PEER_KEY);
        }

        @Test
        void ipBlockWhoseOnlyExceptIsBadDropsTheRuleWhenItIsTheOnlyPeer() {
            NormalizedPolicy n = normalizeWithError(
                    ingressPolicy(peers(ipBlock("10.0.0.0/8", "10.0.0.0/8"))),
                    "spec.ingress[0].from[0].ipBlock.except[0]");

            assertThat(n.compiled().ingress()).isEmpty();
            assertThat(n.compiled().isolates(Direction.INGRESS)).isTrue();
        }

        @Test
        void hostileCidrYieldsASingleLineError() {
            NormalizedPolicy n = PolicyNormalizer.normalize(ingressPolicy(peers(ipBlock(HOSTILE))));

            assertThat(n.errors()).singleElement().satisfies(e -> assertError(e, "spec.ingress[0].from[0].ipBlock.cidr"));
        }

        @Test
        void hostileCidrWithAPrefixLengthYieldsASingleLineError() {
            NormalizedPolicy n = PolicyNormalizer.normalize(ingressPolicy(peers(ipBlock(HOSTILE + "/8"))));

            assertThat(n.errors()).singleElement().satisfies(e -> assertError(e, "spec.ingress[0].from[0].ipBlock.cidr"));
        }

        @Test
        void hostileExceptYieldsASingleLineError() {
            NormalizedPolicy n = PolicyNormalizer.normalize(ingressPolicy(peers(ipBlock("10.0.0.0/8", HOSTILE))));

            assertThat(n.errors()).singleElement()
                    .satisfies(e -> assertError(e, "spec.ingress[0].from[0].ipBlock.except[0]"));
        }

        @Test
        void veryLongBadCidrIsCutInTheMessage() {
            NormalizedPolicy n = PolicyNormalizer.normalize(ingressPolicy(peers(ipBlock("1".repeat(100_000) + "/8"))));

            assertThat(n.errors()).singleElement().satisfies(e -> assertThat(e.reason()).hasSizeLessThan(1_000));
        }
    }

    @Nested
    class InvalidPort {

        static Stream<Arguments> badEndPorts() {
            return Stream.of(
                    Arguments.of("below port", port("TCP", 80, 79)),
                    Arguments.of("with a named port", namedPort("TCP", "http", 90)),
                    Arguments.of("without port", port("TCP", null, 90)),
                    Arguments.of("without port or protocol", port(null, null, 90)),
                    Arguments.of("above 65535", port("TCP", 80, 65536)));
        }

        @ParameterizedTest(name = "endPort {0}")
        @MethodSource("badEndPorts")
        void badEndPortDropsThePortEntry(String why, Port bad) {
            NormalizedPolicy n = normalizeWithError(ingressPolicy(ports(GOOD_PORT, bad)), "spec.ingress[0].ports[1].endPort");

            assertThat(onlyIngressRule(n)).isEqualTo(rule(0, List.of(), List.of(GOOD_PORT_MATCH)));
        }

        @ParameterizedTest
        @ValueSource(strings = {"tcp", "ICMP", "Udp", "", "ALL"})
        void unknownProtocolDropsThePortEntry(String protocol) {
            NormalizedPolicy n = normalizeWithError(
                    ingressPolicy(ports(GOOD_PORT, port(protocol, 80, null))), "spec.ingress[0].ports[1].protocol");

            assertThat(onlyIngressRule(n).ports()).containsExactly(GOOD_PORT_MATCH);
        }

        @Test
        void unknownProtocolWithoutPortIsNotWidenedToTcp() {
            NormalizedPolicy n = normalizeWithError(
                    ingressPolicy(ports(GOOD_PORT, port("ICMP", null, null))), "spec.ingress[0].ports[1].protocol");

            assertThat(onlyIngressRule(n).ports()).containsExactly(GOOD_PORT_MATCH);
        }

        @ParameterizedTest
        @ValueSource(ints = {0, 65536, -1, Integer.MAX_VALUE, Integer.MIN_VALUE})
        void portOutside1To65535DropsThePortEntry(int number) {
            NormalizedPolicy n = normalizeWithError(
                    ingressPolicy(ports(port("TCP", number, null), GOOD_PORT)), "spec.ingress[0].ports[0].port");

            assertThat(onlyIngressRule(n)).isEqualTo(rule(0, List.of(), List.of(GOOD_PORT_MATCH)));
        }

        @ParameterizedTest
        @ValueSource(strings = {"HTTP", "a_b", "", "-a", "a--b", "80", "sixteen-chars-xx"})
        void badNamedPortDropsThePortEntry(String name) {
            NormalizedPolicy n = normalizeWithError(
                    ingressPolicy(ports(namedPort("TCP", name, null), GOOD_PORT)), "spec.ingress[0].ports[0].port");

            assertThat(onlyIngressRule(n).ports()).containsExactly(GOOD_PORT_MATCH);
        }

        @Test
        void boundaryPortsAreValid() {
            CompiledRule r = onlyIngressRule(normalizeValid(ingressPolicy(
                    ports(port("TCP", 1, null), port("TCP", 65535, null), port("TCP", 65535, 65535)))));

            assertThat(r.ports()).containsExactly(PortRange.single(Protocol.TCP, 1), PortRange.single(Protocol.TCP, 65535));
        }

        @Test
        void hostileProtocolAndPortNameYieldSingleLineErrors() {
            NormalizedPolicy n = PolicyNormalizer.normalize(ingressPolicy(
                    ports(port(HOSTILE, 80, null), namedPort("TCP", HOSTILE, null))));

            assertThat(n.errors()).hasSize(2);
            assertError(n.errors().get(0), "spec.ingress[0].ports[0].protocol");
            assertError(n.errors().get(1), "spec.ingress[0].ports[1].port");
        }
    }

    @Nested
    class InvalidSelector {

        @Test
        void unknownOperatorInPodSelectorIsolatesTheWholeNamespace() {
            NormalizedPolicy n = normalizeWithError(
                    policy(BAD_OPERATOR, null, List.of(peers(GOOD_PEER)), null),
                    "spec.podSelector.matchExpressions[0].operator");

            assertThat(n.podSelector()).isEqualTo(Selector.ALL);
            assertThat(n.compiled().isolates(Direction.INGRESS)).isTrue();
            assertThat(onlyIngressRule(n).peers()).containsExactly(GOOD_PEER_KEY);
        }

        @Test
        void badLabelValueInPodSelectorIsolatesTheWholeNamespace() {
            NormalizedPolicy n = normalizeWithError(
                    policy(LabelSelector.matchLabels(Map.of("app", "-bad")), null, null, null),
                    "spec.podSelector.matchLabels[\"app\"]");

            assertThat(n.podSelector()).isEqualTo(Selector.ALL);
        }

        @Test
        void unknownOperatorInPeerNamespaceSelectorDropsThePeer() {
            NormalizedPolicy n = normalizeWithError(
                    ingressPolicy(peers(new Peer(APP_A, BAD_OPERATOR, null), GOOD_PEER)),
                    "spec.ingress[0].from[0].namespaceSelector.matchExpressions[0].operator");

            assertThat(onlyIngressRule(n).peers()).containsExactly(GOOD_PEER_KEY);
        }

        @Test
        void unknownOperatorInPeerNamespaceSelectorAloneDropsThePeer() {
            NormalizedPolicy n = normalizeWithError(
                    ingressPolicy(peers(namespaces(BAD_OPERATOR), GOOD_PEER)),
                    "spec.ingress[0].from[0].namespaceSelector.matchExpressions[0].operator");

            // Had the bad selector been read as empty, this would admit every pod of every namespace.
            assertThat(onlyIngressRule(n).peers()).containsExactly(GOOD_PEER_KEY);
        }

        @Test
        void unknownOperatorInPeerPodSelectorDropsThePeer() {
            NormalizedPolicy n = normalizeWithError(
                    ingressPolicy(peers(GOOD_PEER, pods(BAD_OPERATOR))),
                    "spec.ingress[0].from[1].podSelector.matchExpressions[0].operator");

            assertThat(onlyIngressRule(n).peers()).containsExactly(GOOD_PEER_KEY);
        }

        @Test
        void badPodSelectorBesideAGoodNamespaceSelectorDropsThePeer() {
            NormalizedPolicy n = normalizeWithError(
                    ingressPolicy(peers(new Peer(BAD_OPERATOR, TEAM_B, null), GOOD_PEER)),
                    "spec.ingress[0].from[0].podSelector.matchExpressions[0].operator");

            assertThat(onlyIngressRule(n).peers()).containsExactly(GOOD_PEER_KEY);
        }
    }

    @Nested
    class InvalidPeer {

        @Test
        void peerWithIpBlockAndPodSelectorIsDropped() {
            NormalizedPolicy n = normalizeWithError(
                    ingressPolicy(peers(new Peer(APP_A, null, new IpBlock("10.0.0.0/8", null)), GOOD_PEER)),
                    "spec.ingress[0].from[0]");

            assertThat(n.errors().get(0).reason()).contains("may not specify both");
            assertThat(onlyIngressRule(n).peers()).containsExactly(GOOD_PEER_KEY);
        }

        @Test
        void peerWithIpBlockAndNamespaceSelectorIsDropped() {
            NormalizedPolicy n = normalizeWithError(
                    ingressPolicy(peers(new Peer(null, TEAM_B, new IpBlock("10.0.0.0/8", null)), GOOD_PEER)),
                    "spec.ingress[0].from[0]");

            assertThat(onlyIngressRule(n).peers()).containsExactly(GOOD_PEER_KEY);
        }

        @Test
        void nullPeerEntryIsAPeerWithNothing() {
            NormalizedPolicy n = normalizeWithError(
                    ingressPolicy(peers(GOOD_PEER, null)), "spec.ingress[0].from[1]");

            assertThat(n.errors().get(0).reason()).isEqualTo("must specify a peer");
            assertThat(onlyIngressRule(n).peers()).containsExactly(GOOD_PEER_KEY);
        }

        @Test
        void nullRuleEntryIsARuleWithEveryFieldAbsentWhichAdmitsEverything() {
            NormalizedPolicy n = normalizeValid(policy(null, null, Arrays.asList((Rule) null), null));

            assertThat(onlyIngressRule(n)).isEqualTo(rule(0, List.of(), List.of()));
        }

        @Test
        void peerWithNothingIsDropped() {
            NormalizedPolicy n = normalizeWithError(
                    ingressPolicy(peers(GOOD_PEER, new Peer(null, null, null))), "spec.ingress[0].from[1]");

            assertThat(n.errors().get(0).reason()).isEqualTo("must specify a peer");
            assertThat(onlyIngressRule(n).peers()).containsExactly(GOOD_PEER_KEY);
        }
    }

    @Nested
    class InvalidPolicyTypes {

        @ParameterizedTest
        @ValueSource(strings = {"ingress", "Both", "", "Egres"})
        void unknownEntryIsolatesBothDirections(String bad) {
            NormalizedPolicy n = normalizeWithError(
                    policy(null, List.of("Ingress", bad), List.of(peers(GOOD_PEER)), null), "spec.policyTypes[1]");

            assertThat(n.compiled().directions()).isEqualTo(EnumSet.allOf(Direction.class));
            assertThat(n.compiled().egress()).isEmpty();
            assertThat(onlyIngressRule(n).peers()).containsExactly(GOOD_PEER_KEY);
        }

        @Test
        void unknownEntryAloneIsolatesBothDirections() {
            NormalizedPolicy n = normalizeWithError(policy(null, List.of("Egress", "None"), null, null), "spec.policyTypes[1]");

            assertThat(n.compiled().isolates(Direction.INGRESS)).isTrue();
            assertThat(n.compiled().isolates(Direction.EGRESS)).isTrue();
        }

        @Test
        void moreThanTwoEntriesIsAnError() {
            NormalizedPolicy n = PolicyNormalizer.normalize(policy(null, List.of("Ingress", "Egress", "Ingress"), null, null));

            assertThat(n.errors()).extracting(ValidationError::field).containsExactly("spec.policyTypes");
            assertThat(n.compiled().directions()).containsExactlyInAnyOrder(Direction.INGRESS, Direction.EGRESS);
        }

        @Test
        void hostilePolicyTypeYieldsASingleLineError() {
            normalizeWithError(policy(null, List.of(HOSTILE), null, null), "spec.policyTypes[0]");
        }
    }

    @Nested
    class FailClosedRules {

        @Test
        void ruleWhoseOnlyPeerIsInvalidIsDroppedNotTurnedIntoAllowAll() {
            NormalizedPolicy n = normalizeWithError(
                    ingressPolicy(peers(ipBlock("10.0.0.0/33")), new Rule(List.of(GOOD_PEER), List.of(GOOD_PORT))),
                    "spec.ingress[0].from[0].ipBlock.cidr");

            // Rule 1 keeps its index: rule references in verdicts must still point at the written rule.
            assertThat(n.compiled().ingress()).containsExactly(rule(1, List.of(GOOD_PEER_KEY), List.of(GOOD_PORT_MATCH)));
            assertThat(n.compiled().ingress()).noneMatch(CompiledRule::anyPeer);
        }

        @Test
        void ruleWhoseOnlyPortIsInvalidIsDroppedNotTurnedIntoAnyPort() {
            NormalizedPolicy n = normalizeWithError(
                    ingressPolicy(new Rule(List.of(GOOD_PEER), List.of(port("TCP", 0, null)))),
                    "spec.ingress[0].ports[0].port");

            assertThat(n.compiled().ingress()).isEmpty();
            assertThat(n.compiled().isolates(Direction.INGRESS)).isTrue();
        }

        @Test
        void ruleWhoseEveryPeerIsInvalidIsDropped() {
            NormalizedPolicy n = PolicyNormalizer.normalize(ingressPolicy(
                    peers(ipBlock("garbage"), pods(BAD_OPERATOR), new Peer(null, null, null))));

            assertThat(n.errors()).extracting(ValidationError::field).containsExactly(
                    "spec.ingress[0].from[0].ipBlock.cidr",
                    "spec.ingress[0].from[1].podSelector.matchExpressions[0].operator",
                    "spec.ingress[0].from[2]");
            assertThat(n.compiled().ingress()).isEmpty();
        }

        @Test
        void ruleWithValidPeersButNoValidPortIsDropped() {
            NormalizedPolicy n = PolicyNormalizer.normalize(ingressPolicy(
                    new Rule(List.of(GOOD_PEER), List.of(port("tcp", 80, null), port("TCP", 80, 70)))));

            assertThat(n.errors()).hasSize(2);
            assertThat(n.compiled().ingress()).isEmpty();
        }

        @Test
        void ruleWithOneValidAndOneInvalidPeerKeepsTheValidOne() {
            NormalizedPolicy n = normalizeWithError(
                    ingressPolicy(new Rule(List.of(ipBlock("10.0.0.0/33"), GOOD_PEER), List.of(GOOD_PORT))),
                    "spec.ingress[0].from[0].ipBlock.cidr");

            assertThat(n.compiled().ingress()).containsExactly(rule(0, List.of(GOOD_PEER_KEY), List.of(GOOD_PORT_MATCH)));
        }

        @Test
        void ruleWithOneValidAndOneInvalidPortKeepsTheValidOne() {
            NormalizedPolicy n = normalizeWithError(
                    ingressPolicy(new Rule(List.of(GOOD_PEER), List.of(port("TCP", 65536, null), GOOD_PORT))),
                    "spec.ingress[0].ports[0].port");

            assertThat(n.compiled().ingress()).containsExactly(rule(0, List.of(GOOD_PEER_KEY), List.of(GOOD_PORT_MATCH)));
        }

        @Test
        void invalidIngressRuleIsReportedEvenWhenIngressIsNotEnforced() {
            NormalizedPolicy n = normalizeWithError(
                    policy(null, List.of("Egress"), List.of(peers(ipBlock("garbage"))), null),
                    "spec.ingress[0].from[0].ipBlock.cidr");

            assertThat(n.compiled().ingress()).isEmpty();
        }

        @Test
        void errorsInManyPlacesAreAllReportedInOrder() {
            NormalizedPolicy n = PolicyNormalizer.normalize(policy(BAD_OPERATOR, List.of("Ingress", "Egress"),
                    List.of(peers(GOOD_PEER), ports(port("UDP", 0, null))),
                    List.of(peers(ipBlock("10.0.0.0/8", "11.0.0.0/8")))));

            List<String> fields = new ArrayList<>();
            n.errors().forEach(e -> {
                assertThat(e.object()).hasToString(OBJECT);
                fields.add(e.field());
            });
            assertThat(fields).containsExactly(
                    "spec.podSelector.matchExpressions[0].operator",
                    "spec.ingress[1].ports[0].port",
                    "spec.egress[0].to[0].ipBlock.except[0]");
            assertThat(n.compiled().ingress()).containsExactly(rule(0, List.of(GOOD_PEER_KEY), List.of()));
            assertThat(n.compiled().egress()).isEmpty();
        }
    }

    @Nested
    class EgressFieldNames {

        @Test
        void badCidrInAnEgressPeerIsReportedUnderTo() {
            NormalizedPolicy n = normalizeWithError(
                    egressPolicy(peers(GOOD_PEER), peers(ipBlock("10.0.0.0/33"), GOOD_PEER)),
                    "spec.egress[1].to[0].ipBlock.cidr");

            assertThat(n.compiled().egress()).containsExactly(
                    rule(0, List.of(GOOD_PEER_KEY), List.of()),
                    rule(1, List.of(GOOD_PEER_KEY), List.of()));
        }

        @Test
        void badExceptInAnEgressPeerIsReportedUnderTo() {
            NormalizedPolicy n = normalizeWithError(
                    egressPolicy(peers(GOOD_PEER, ipBlock("10.0.0.0/8", "10.0.0.0/8"))),
                    "spec.egress[0].to[1].ipBlock.except[0]");

            assertThat(n.compiled().egress()).containsExactly(rule(0, List.of(GOOD_PEER_KEY), List.of()));
        }

        @Test
        void badNamespaceSelectorInAnEgressPeerIsReportedUnderTo() {
            normalizeWithError(egressPolicy(peers(namespaces(BAD_OPERATOR), GOOD_PEER)),
                    "spec.egress[0].to[0].namespaceSelector.matchExpressions[0].operator");
        }

        @Test
        void emptyEgressPeerIsReportedUnderTo() {
            NormalizedPolicy n = normalizeWithError(egressPolicy(peers(new Peer(null, null, null))), "spec.egress[0].to[0]");

            assertThat(n.compiled().egress()).isEmpty();
            assertThat(n.compiled().isolates(Direction.EGRESS)).isTrue();
        }

        @Test
        void badEgressPortIsReportedUnderEgressPorts() {
            NormalizedPolicy n = normalizeWithError(
                    egressPolicy(new Rule(List.of(GOOD_PEER), List.of(port("ICMP", null, null)))),
                    "spec.egress[0].ports[0].protocol");

            assertThat(n.compiled().egress()).isEmpty();
        }
    }
}
