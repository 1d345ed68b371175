package io.npmagent.iptables.nft;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.iptables.model.Family;
import io.npmagent.iptables.model.Member;
import io.npmagent.iptables.model.SetId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Elements are compared in one spelling, whatever nft prints. */
class NftElementsTest {

    private static SetId.Cidr cidr(String cidr, String... except) {
        PeerSetKey.CidrPeers key = new PeerSetKey.CidrPeers(Cidr.parse(cidr), Stream.of(except).map(Cidr::parse).toList());
        return new SetId.Cidr(key, Family.of(key.cidr()));
    }

    /** What NetfilterModel.members gives for a CIDR set: the prefixes (a /0 as two /1), then the excepts. */
    private static List<Member> members(SetId.Cidr id) {
        List<Member> out = new ArrayList<>();
        Cidr c = id.key().cidr();
        if (c.prefixLength() == 0) {
            out.add(new Member.Net(new Cidr(c.network(), 1), false));
            out.add(new Member.Net(new Cidr(c.v6() ? IpAddress.v6(Long.MIN_VALUE, 0) : IpAddress.v4(0x80000000), 1), false));
        } else {
            out.add(new Member.Net(c, false));
        }
        id.key().except().forEach(e -> out.add(new Member.Net(e, true)));
        return out;
    }

    @Test
    void spellsMembers() {
        assertThat(NftElements.text(new Member.Host(IpAddress.parse("fd00:0:0::1")))).isEqualTo("fd00::1");
        assertThat(NftElements.text(new Member.Net(Cidr.parse("10.0.0.0/8"), false))).isEqualTo("10.0.0.0/8");
        assertThat(NftElements.text(new Member.Net(Cidr.parse("10.0.0.7/32"), true))).isEqualTo("10.0.0.7");
        assertThat(NftElements.text(new Member.HostPort(IpAddress.parse("10.0.0.1"), Protocol.SCTP, 9000)))
                .isEqualTo("10.0.0.1 . sctp . 9000");
        assertThat(NftElements.dispatch(IpAddress.parse("10.0.0.1"), "pod_in4_x")).isEqualTo("10.0.0.1 : jump pod_in4_x");
        assertThat(NftElements.key("10.0.0.1 : jump pod_in4_x")).isEqualTo("10.0.0.1");
        assertThat(NftElements.key("10.0.0.1 . tcp . 80")).isEqualTo("10.0.0.1 . tcp . 80");
    }

    @Test
    void anIpBlockIsItsPrefixesAndASetOfItsOutermostExcepts() {
        SetId.Cidr id = cidr("192.168.0.0/16", "192.168.1.0/24", "192.168.1.128/25", "192.168.2.0/24");
        Map<String, Set<String>> sets = NftElements.of(id, members(id));
        assertThat(sets).containsOnlyKeys(NftNames.set(id), NftNames.excepts(id));
        assertThat(sets.get(NftNames.set(id))).containsExactly("192.168.0.0/16");
        assertThat(sets.get(NftNames.excepts(id))).as("an except inside another would overlap in an interval set")
                .containsExactlyInAnyOrder("192.168.1.0/24", "192.168.2.0/24");
    }

    @Test
    void theWholeAddressSpaceIsTwoHalvesInBothFamilies() {
        SetId.Cidr v4 = cidr("0.0.0.0/0", "10.0.0.0/8");
        assertThat(NftElements.of(v4, members(v4)).get(NftNames.set(v4))).containsExactlyInAnyOrder("0.0.0.0/1", "128.0.0.0/1");
        SetId.Cidr v6 = cidr("::/0");
        Map<String, Set<String>> sets = NftElements.of(v6, members(v6));
        assertThat(sets).as("no excepts, no except set").containsOnlyKeys(NftNames.set(v6));
        assertThat(sets.get(NftNames.set(v6))).containsExactlyInAnyOrder("::/1", "8000::/1");
    }

    @Test
    void normalisesWhatNftPrints() {
        assertThat(NftElements.fromJson("fd00:0::1")).hasValue("fd00::1");
        assertThat(NftElements.fromJson("10.0.0.7")).hasValue("10.0.0.7");
        assertThat(NftElements.fromJson(Map.of("prefix", Map.of("addr", "10.1.0.0", "len", 16L)))).hasValue("10.1.0.0/16");
        assertThat(NftElements.fromJson(Map.of("prefix", Map.of("addr", "::", "len", 1L)))).hasValue("::/1");
        assertThat(NftElements.fromJson(Map.of("prefix", Map.of("addr", "10.0.0.7", "len", 32L)))).hasValue("10.0.0.7");
        assertThat(NftElements.fromJson(Map.of("concat", List.of("10.0.0.1", "tcp", 8080L)))).hasValue("10.0.0.1 . tcp . 8080");
        assertThat(NftElements.fromJson(Map.of("concat", List.of("fd00::1", 132L, "9000")))).hasValue("fd00::1 . sctp . 9000");
        assertThat(NftElements.fromJson(Map.of("elem", Map.of("val", "10.0.0.1", "comment", "by hand")))).hasValue("10.0.0.1");
        assertThat(NftElements.fromJson(Map.of("range", List.of("10.0.0.1", "10.0.0.9")))).hasValue("10.0.0.1-10.0.0.9");
        assertThat(NftElements.dispatchFromJson(List.of("10.0.0.1", Map.of("jump", Map.of("target", "pod_in4_aaaaaaaaaaaaaaaa")))))
                .hasValue("10.0.0.1 : jump pod_in4_aaaaaaaaaaaaaaaa");
    }

    @Test
    void whatTheAgentCannotHaveWrittenIsNotRead() {
        assertThat(NftElements.fromJson("not an address")).isEmpty();
        assertThat(NftElements.fromJson("10.0.0.1 } ; flush ruleset")).isEmpty();
        assertThat(NftElements.fromJson(Map.of("concat", List.of("10.0.0.1", "icmp", 1L)))).isEmpty();
        assertThat(NftElements.fromJson(Map.of("concat", List.of("10.0.0.1", "tcp", 70000L)))).isEmpty();
        assertThat(NftElements.fromJson(7L)).isEmpty();
        assertThat(NftElements.dispatchFromJson(List.of("10.0.0.1", Map.of("drop", Optional.empty())))).isEmpty();
        assertThat(NftElements.dispatchFromJson(List.of("10.0.0.1", Map.of("jump", Map.of("target", "x; flush ruleset")))))
                .isEmpty();
    }
}
