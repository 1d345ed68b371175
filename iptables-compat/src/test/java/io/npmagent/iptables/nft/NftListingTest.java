package io.npmagent.iptables.nft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.npmagent.dataplane.model.Direction;
import io.npmagent.iptables.model.Family;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Read-back takes chains with their hooks and rule hashes, sets and maps with normalised elements. */
class NftListingTest {
    static final String LISTING = """
            {"nftables": [{"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", "json_schema_version": 1}},
             {"table": {"family": "inet", "name": "npm_agent", "handle": 1}},
             {"map": {"family": "inet", "name": "ingress4", "table": "npm_agent", "type": "ipv4_addr", "handle": 2,
                      "map": "verdict", "elem": [["10.0.0.1", {"jump": {"target": "pod_in4_aaaaaaaaaaaaaaaa"}}]]}},
             {"set": {"family": "inet", "name": "c4_aaaaaaaaaaaaaaaaaaaa", "table": "npm_agent", "type": "ipv4_addr",
                      "handle": 6, "flags": ["interval"],
                      "elem": [{"prefix": {"addr": "0.0.0.0", "len": 1}}, {"prefix": {"addr": "128.0.0.0", "len": 1}}, "10.9.9.9"]}},
             {"set": {"family": "inet", "name": "n4_aaaaaaaaaaaaaaaaaaaa", "table": "npm_agent",
                      "type": ["ipv4_addr", "inet_proto", "inet_service"], "handle": 9,
                      "elem": [{"concat": ["10.0.0.2", "sctp", 80]}, {"elem": {"val": {"concat": ["10.0.0.1", "tcp", 8080]}, "comment": "x"}}]}},
             {"set": {"family": "inet", "name": "s4_aaaaaaaaaaaaaaaaaaaa", "table": "npm_agent", "type": "ipv4_addr", "handle": 5}},
             {"set": {"family": "inet", "name": "hand_made", "table": "npm_agent", "type": "ether_addr", "handle": 12,
                      "elem": ["02:00:00:00:00:01"]}},
             {"chain": {"family": "inet", "table": "npm_agent", "name": "egress", "handle": 3,
                        "type": "filter", "hook": "forward", "prio": 1, "policy": "accept"}},
             {"chain": {"family": "inet", "table": "npm_agent", "name": "pod_in4_aaaaaaaaaaaaaaaa", "handle": 11}},
             {"chain": {"family": "inet", "table": "elsewhere", "name": "input", "handle": 1}},
             {"rule": {"family": "inet", "table": "npm_agent", "chain": "egress", "handle": 20,
                       "comment": "npm:iiiiiiiiiiiiiiii replies", "expr": [{"accept": null}]}},
             {"rule": {"family": "inet", "table": "npm_agent", "chain": "pod_in4_aaaaaaaaaaaaaaaa", "handle": 18,
                       "comment": "npm:gggggggggggggggg", "expr": [{"jump": {"target": "pol_in4_aaaaaaaaaaaaaaaa"}}]}},
             {"rule": {"family": "inet", "table": "npm_agent", "chain": "pod_in4_aaaaaaaaaaaaaaaa", "handle": 19,
                       "expr": [{"drop": null}]}},
             {"rule": {"family": "inet", "table": "npm_agent", "chain": "pod_in4_aaaaaaaaaaaaaaaa", "handle": 21,
                       "comment": "npm:short", "expr": [{"drop": null}]}}]}
            """;

    @Test
    void readsChainsInOrderWithTheirHashes() {
        NftListing.Contents c = NftListing.parse(LISTING);
        assertThat(c.chains()).containsOnlyKeys("egress", "pod_in4_aaaaaaaaaaaaaaaa");
        assertThat(c.chains().get("egress")).isEqualTo(new NftTable.ChainState(
                "{ type filter hook forward priority 1; policy accept; }", List.of("iiiiiiiiiiiiiiii"), 3));
        assertThat(c.chains().get("egress").hook()).isEqualTo(NftBackend.baseHook(Direction.EGRESS));
        assertThat(c.chains().get("pod_in4_aaaaaaaaaaaaaaaa").hashes())
                .as("a rule without our comment, or with a malformed one, reads as foreign")
                .containsExactly("gggggggggggggggg", NftListing.FOREIGN, NftListing.FOREIGN);
        assertThat(c.chains().get("pod_in4_aaaaaaaaaaaaaaaa").hook()).isNull();
    }

    @Test
    void readsSetsAndMapsWithTheirTypesAndNormalisedElements() {
        NftListing.Contents c = NftListing.parse(LISTING);
        assertThat(c.sets().get("ingress4").signature()).isEqualTo(NftSetSpec.dispatch(Family.IPV4).signature());
        assertThat(c.sets().get("ingress4").elements()).containsExactly("10.0.0.1 : jump pod_in4_aaaaaaaaaaaaaaaa");
        NftTable.SetState cidr = c.sets().get("c4_aaaaaaaaaaaaaaaaaaaa");
        assertThat(cidr.signature()).isEqualTo("set ipv4_addr interval");
        assertThat(cidr.elements()).containsExactlyInAnyOrder("0.0.0.0/1", "128.0.0.0/1", "10.9.9.9");
        assertThat(cidr.readable()).isTrue();
        assertThat(cidr.handle()).isEqualTo(6);
        NftTable.SetState named = c.sets().get("n4_aaaaaaaaaaaaaaaaaaaa");
        assertThat(named.signature()).isEqualTo("set ipv4_addr . inet_proto . inet_service");
        assertThat(named.elements()).containsExactlyInAnyOrder("10.0.0.2 . sctp . 80", "10.0.0.1 . tcp . 8080");
        assertThat(c.sets().get("s4_aaaaaaaaaaaaaaaaaaaa").elements()).isEmpty();
        assertThat(c.sets().get("hand_made").readable()).as("an element the agent cannot have written").isFalse();
    }

    @Test
    void refusesWhatIsNotAListing() {
        assertThatThrownBy(() -> NftListing.parse("{\"tables\": []}")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> NftListing.parse("Error: syntax error")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> NftListing.parse(
                "{\"nftables\": [{\"chain\": {\"family\": \"inet\", \"table\": \"npm_agent\", \"name\": 7}}]}"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name");
    }
}
