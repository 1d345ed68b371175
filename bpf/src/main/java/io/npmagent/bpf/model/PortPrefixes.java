package io.npmagent.bpf.model;

import java.util.ArrayList;
import java.util.List;

/** A port range as the fewest aligned prefixes that cover it exactly, as an LPM trie can hold it. */
public final class PortPrefixes {
    private PortPrefixes() {}

    /** One prefix: the ports whose first {@code bits} bits equal {@code port}'s. */
    public record Prefix(int port, int bits) {
        public int first() {
            return port;
        }

        public int last() {
            return port + (1 << (16 - bits)) - 1;
        }
    }

    public static List<Prefix> of(int first, int last) {
        if (first < 0 || last > 65535 || first > last) {
            throw new IllegalArgumentException("bad port range " + first + "-" + last);
        }
        List<Prefix> out = new ArrayList<>();
        int port = first;
        while (port <= last) {
            int size = port == 0 ? 1 << 16 : Integer.lowestOneBit(port);
            while (port + size - 1 > last) {
                size >>= 1;
            }
            out.add(new Prefix(port, 16 - Integer.numberOfTrailingZeros(size)));
            port += size;
        }
        return out;
    }
}
