package io.npmagent.iptables.nft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class JsonTest {

    @Test
    void readsWhatNftPrints() {
        Object v = Json.parse(" {\"nftables\": [{\"rule\": {\"handle\": 12, \"comment\": \"npm:a \\\"q\\\" \\u00e9\\n\","
                + " \"expr\": [{\"accept\": null}], \"neg\": -1.5e2, \"t\": true, \"f\": false, \"e\": [], \"o\": {}}}]}\n");
        Map<?, ?> rule = (Map<?, ?>) ((Map<?, ?>) ((List<?>) ((Map<?, ?>) v).get("nftables")).get(0)).get("rule");
        assertThat(rule.get("handle")).isEqualTo(12L);
        assertThat(rule.get("comment")).isEqualTo("npm:a \"q\" \u00e9\n");
        assertThat(rule.get("expr")).isEqualTo(List.of(Collections.singletonMap("accept", null)));
        assertThat(rule.get("neg")).isEqualTo(-150.0);
        assertThat(rule.get("t")).isEqualTo(true);
        assertThat(rule.get("f")).isEqualTo(false);
        assertThat(rule.get("e")).isEqualTo(List.of());
        assertThat(rule.get("o")).isEqualTo(Map.of());
        assertThat(List.<Object>copyOf(((Map<?, ?>) Json.parse("{\"b\": 1, \"a\": 2}")).keySet())).containsExactly("b", "a");
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{\"a\":1} x", "nul", "tru", "01", "1.", "-", "1e", "\"\\x\"",
        "\"a\nb\"", "\"\\u12\"", "{\"a\":1,\"a\":2}", "[1 2]", "{a:1}", "'a'", "\"unterminated"
    })
    void refusesWhatIsNotJson(String text) {
        assertThatThrownBy(() -> Json.parse(text)).isInstanceOf(Json.JsonException.class).hasMessageContaining("offset");
    }

    @Test
    void refusesNestingDeeperThanNftEverPrints() {
        String deep = "[".repeat(Json.MAX_DEPTH + 2) + "]".repeat(Json.MAX_DEPTH + 2);
        assertThatThrownBy(() -> Json.parse(deep)).isInstanceOf(Json.JsonException.class).hasMessageContaining("nested");
        String ok = "[".repeat(Json.MAX_DEPTH) + "]".repeat(Json.MAX_DEPTH);
        assertThat(Json.parse(ok)).isInstanceOf(List.class);
    }
}
