package io.npmagent.iptables.nft;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.desired.PortMatch;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.model.Selector;
import io.npmagent.iptables.model.ChainId;
import io.npmagent.iptables.model.Family;
import io.npmagent.iptables.model.RuleSpec;
import io.npmagent.iptables.model.SetId;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Each kind of rule as nft text: one rule body per (peer, port), the hash comment, the descriptions. */
class NftRulesTest {
    private static final PolicyKey WEB = new PolicyKey("x", "web");
    private static final ChainId.PolicyChain IN4 = new ChainId.PolicyChain(WEB, Direction.INGRESS, Family.IPV4);
    private static final ChainId.PolicyChain EG4 = new ChainId.PolicyChain(WEB, Direction.EGRESS, Family.IPV4);
    private static final ChainId.PolicyChain IN6 = new ChainId.PolicyChain(WEB, Direction.INGRESS, Family.IPV6);
    private static final PeerSetKey.SelectorPeers API = PeerSetKey.SelectorPeers.inNamespace("x",
            new Selector(new TreeMap<>(Map.of("app", "api")), List.of()));

    private static SetId selector(Family f) {
        return new SetId.Selector(API, f);
    }

    private static SetId.Cidr cidr(String cidr, String... except) {
        List<Cidr> e = Stream.of(except).map(Cidr::parse).toList();
        PeerSetKey.CidrPeers key = new PeerSetKey.CidrPeers(Cidr.parse(cidr), e);
        return new SetId.Cidr(key, Family.of(key.cidr()));
    }

    private static String body(ChainId.PolicyChain chain, SetId peers, PortMatch port) {
        List<NftRules.Rule> rules = NftRules.policyChain(List.of(new RuleSpec(3, peers, port)), chain);
        assertThat(rules).hasSize(1);
        assertThat(rules.get(0).description()).isEqualTo("x/web " + chain.direction().apiName().toLowerCase() + " rule 3");
        return rules.get(0).body();
    }

    static Stream<Arguments> kinds() {
        String s4 = NftNames.set(selector(Family.IPV4));
        String s6 = NftNames.set(selector(Family.IPV6));
        SetId.Cidr block = cidr("192.168.0.0/16", "192.168.1.0/24");
        SetId.Cidr plain = cidr("172.16.0.0/12");
        SetId.Cidr all6 = cidr("::/0", "fd00::/8");
        PortMatch.NamedPort http = new PortMatch.NamedPort(Protocol.TCP, "http");
        String n4 = NftNames.set(new SetId.NamedPort(http, Family.IPV4));
        return Stream.of(
                Arguments.of("selector peer, one port", IN4, selector(Family.IPV4), PortMatch.PortRange.single(Protocol.TCP, 80),
                        "ip saddr @" + s4 + " tcp dport 80 accept"),
                Arguments.of("selector peer, egress: the peer is the destination", EG4, selector(Family.IPV4), null,
                        "ip daddr @" + s4 + " accept"),
                Arguments.of("selector peer, IPv6", IN6, selector(Family.IPV6), PortMatch.PortRange.single(Protocol.UDP, 53),
                        "ip6 saddr @" + s6 + " udp dport 53 accept"),
                Arguments.of("ipBlock with except: prefixes and not the excepts", IN4, block, null,
                        "ip saddr @" + NftNames.set(block) + " ip saddr != @" + NftNames.excepts(block) + " accept"),
                Arguments.of("ipBlock without except: no except set", EG4, plain, PortMatch.PortRange.single(Protocol.TCP, 443),
                        "ip daddr @" + NftNames.set(plain) + " tcp dport 443 accept"),
                Arguments.of("ipBlock ::/0 with except", IN6, all6, null,
                        "ip6 saddr @" + NftNames.set(all6) + " ip6 saddr != @" + NftNames.excepts(all6) + " accept"),
                Arguments.of("named port: destination address, protocol and port", IN4, selector(Family.IPV4), http,
                        "ip saddr @" + s4 + " ip daddr . meta l4proto . th dport @" + n4 + " accept"),
                Arguments.of("named port, any peer", EG4, null, http, "ip daddr . meta l4proto . th dport @" + n4 + " accept"),
                Arguments.of("port range", IN4, null, new PortMatch.PortRange(Protocol.TCP, 53, 80), "tcp dport 53-80 accept"),
                Arguments.of("protocol only", IN4, null, PortMatch.PortRange.all(Protocol.UDP), "meta l4proto udp accept"),
                Arguments.of("SCTP", IN4, null, PortMatch.PortRange.single(Protocol.SCTP, 9000), "sctp dport 9000 accept"),
                Arguments.of("SCTP range", IN6, null, new PortMatch.PortRange(Protocol.SCTP, 1, 2), "sctp dport 1-2 accept"),
                Arguments.of("any peer, any port", IN4, null, null, "accept"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void rendersEachKindOfRule(String kind, ChainId.PolicyChain chain, SetId peers, PortMatch port, String expected) {
        assertThat(body(chain, peers, port)).isEqualTo(expected);
    }

    @Test
    void aDenyAllPolicyIsAnEmptyChainAndItsPodsDrop() {
        assertThat(NftRules.policyChain(List.of(), IN4)).isEmpty();
        ChainId.PodChain pod = new ChainId.PodChain(new PodKey("x", "b"), Direction.INGRESS, Family.IPV4);
        assertThat(NftRules.podChain(List.of(), pod))
                .containsExactly(new NftRules.Rule("drop", "drop: x/b isolated for ingress"));
    }

    @Test
    void anEgressChainDropsAllButTheNodesOwnAddresses() {
        ChainId.PodChain pod = new ChainId.PodChain(new PodKey("x", "b"), Direction.EGRESS, Family.IPV4);
        assertThat(NftRules.podChain(List.of(), pod))
                .containsExactly(new NftRules.Rule("fib daddr type != local drop", "drop: x/b isolated for egress, not to its node"));
    }

    @Test
    void aPodWithTwoPoliciesTriesThemInOrderThenDrops() {
        PolicyKey other = new PolicyKey("x", "other");
        ChainId.PodChain pod = new ChainId.PodChain(new PodKey("x", "b"), Direction.EGRESS, Family.IPV6);
        List<NftRules.Rule> rules = NftRules.podChain(List.of(WEB, other), pod);
        assertThat(rules).extracting(NftRules.Rule::body).containsExactly(
                "jump " + NftNames.chain(new ChainId.PolicyChain(WEB, Direction.EGRESS, Family.IPV6)),
                "jump " + NftNames.chain(new ChainId.PolicyChain(other, Direction.EGRESS, Family.IPV6)),
                "fib daddr type != local drop");
        assertThat(rules.get(0).body()).startsWith("jump pol_eg6_");
    }

    @Test
    void baseChainsLetRepliesThroughThenDispatchPerFamily() {
        assertThat(NftRules.baseChain(Direction.EGRESS)).extracting(NftRules.Rule::body).containsExactly(
                "ct state established,related accept", "ip saddr vmap @egress4", "ip6 saddr vmap @egress6");
        assertThat(NftRules.baseChain(Direction.INGRESS)).extracting(NftRules.Rule::body).containsExactly(
                "ct state established,related accept", "ip daddr vmap @ingress4", "ip6 daddr vmap @ingress6");
    }

    @Test
    void theInputHookSendsNewConnectionsToTheNodeToThePodsEgressChain() {
        assertThat(NftRules.toNodeChain()).extracting(NftRules.Rule::body).containsExactly(
                "ct state established,related accept",
                "ct state new,untracked fib daddr type local ip saddr vmap @egress4",
                "ct state new,untracked fib daddr type local ip6 saddr vmap @egress6");
    }

    @Test
    void aRuleHashCoversChainPositionAndBody() {
        List<NftRules.Rule> rules = List.of(new NftRules.Rule("accept", "a"), new NftRules.Rule("accept", "a"));
        List<NftRules.Line> lines = NftRules.lines("pol_in4_x", rules);
        assertThat(lines.get(0).hash()).hasSize(16).isNotEqualTo(lines.get(1).hash());
        assertThat(NftRules.lines("pol_in4_y", rules).get(0).hash()).isNotEqualTo(lines.get(0).hash());
        assertThat(NftRules.lines("pol_in4_x", List.of(new NftRules.Rule("accept", "another description"))).get(0).hash())
                .as("the description is not part of what is compared").isEqualTo(lines.get(0).hash());
        assertThat(lines.get(0).text()).isEqualTo("accept comment \"npm:" + lines.get(0).hash() + " a\"");
    }

    @Test
    void commentsStayWithinNftsLimitAndPlainCharacters() {
        String evil = "\"; flush ruleset; $(id) `x`\n\u2603é" + "n".repeat(300);
        List<NftRules.Line> lines = NftRules.lines("c", List.of(new NftRules.Rule("accept", NftRules.describe(evil))));
        String comment = lines.get(0).text().substring("accept comment \"".length(), lines.get(0).text().length() - 1);
        assertThat(comment).hasSizeLessThanOrEqualTo(NftRules.MAX_COMMENT).matches("npm:[a-z2-7]{16} [A-Za-z0-9._/:-]*");
        assertThat(NftRules.describe("a b\"c\nd;e$(f)g/h:i-j.k_l\u00fc")).isEqualTo("a_b_c_d_e__f_g/h:i-j.k_l_");
    }
}
