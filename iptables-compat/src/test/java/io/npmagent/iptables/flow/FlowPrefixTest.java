package io.npmagent.iptables.flow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.npmagent.dataplane.flow.FlowVerdict;
import io.npmagent.dataplane.model.Direction;
import org.junit.jupiter.api.Test;

class FlowPrefixTest {
    @Test
    void aPrefixReadsBackAsWritten() {
        FlowPrefix p = new FlowPrefix(FlowVerdict.DENIED, Direction.INGRESS, 12);
        assertThat(p.text()).isEqualTo("npm:D:I:12");
        assertThat(FlowPrefix.parse("npm:D:I:12")).isEqualTo(p);
        assertThat(FlowPrefix.parse("npm:A:E:0")).isEqualTo(new FlowPrefix(FlowVerdict.ALLOWED, Direction.EGRESS, 0));
        assertThat(FlowPrefix.parse(new FlowPrefix(FlowVerdict.DENIED, Direction.EGRESS, Integer.MAX_VALUE).text()).ref())
                .isEqualTo(Integer.MAX_VALUE);
    }

    @Test
    void anythingElseIsRefusedByName() {
        for (String bad : new String[] {"", "npm:D:I:", "npm:X:I:1", "npm:D:Q:1", "npm:D:I:01", "npm:D:I:-1", "npm:D:I:1 ", "ulogd: x",
                "npm:D:I:4294967296", "npm:D:I:99999999999"}) {
            assertThatThrownBy(() -> FlowPrefix.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> FlowPrefix.parse("npm:\n\u0001")).hasMessageContaining("npm:??");
        assertThatThrownBy(() -> new FlowPrefix(FlowVerdict.DENIED, Direction.INGRESS, -1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aPrefixHoldsOnlyTheAgentsTokensAndFitsIptablesLimit() {
        String longest = new FlowPrefix(FlowVerdict.DENIED, Direction.INGRESS, Integer.MAX_VALUE).text();
        assertThat(longest).matches("npm:[DA]:[IE]:[0-9]+").hasSizeLessThan(64);
    }
}
