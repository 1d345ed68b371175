package io.npmagent.bpf.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class PortPrefixesTest {
    @Test
    void knownRanges() {
        assertThat(PortPrefixes.of(0, 65535)).containsExactly(new PortPrefixes.Prefix(0, 0));
        assertThat(PortPrefixes.of(80, 80)).containsExactly(new PortPrefixes.Prefix(80, 16));
        assertThat(PortPrefixes.of(53, 80)).containsExactly(
                new PortPrefixes.Prefix(53, 16), new PortPrefixes.Prefix(54, 15), new PortPrefixes.Prefix(56, 13),
                new PortPrefixes.Prefix(64, 12), new PortPrefixes.Prefix(80, 16));
    }

    @Property(tries = 2000)
    void prefixesCoverTheRangeExactlyAndDoNotOverlap(@ForAll @IntRange(min = 0, max = 65535) int a, @ForAll @IntRange(min = 0, max = 65535) int b) {
        int first = Math.min(a, b);
        int last = Math.max(a, b);
        List<PortPrefixes.Prefix> prefixes = PortPrefixes.of(first, last);
        int next = first;
        for (PortPrefixes.Prefix p : prefixes) {
            assertThat(p.first()).isEqualTo(next);
            assertThat(p.port() & ((1 << (16 - p.bits())) - 1)).as("aligned").isZero();
            next = p.last() + 1;
        }
        assertThat(next - 1).isEqualTo(last);
        assertThat(prefixes.size()).isLessThanOrEqualTo(30);
    }
}
