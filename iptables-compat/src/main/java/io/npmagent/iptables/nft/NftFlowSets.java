package io.npmagent.iptables.nft;

import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.iptables.flow.CountedFlow;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Reads a flow set's listing ({@code nft -j list set inet npm_agent flows_in4}): each element's key
 * ({@code saddr . daddr . protocol . port}), its counter and its time left. An element this cannot read
 * (a protocol by a name it does not know) is skipped: its flow still counts in the kernel.
 */
final class NftFlowSets {
    private NftFlowSets() {}

    /** Adds the elements to {@code out}; returns how many the set holds. */
    static int parse(String json, Direction direction, List<CountedFlow> out) {
        Object root = Json.parse(json);
        if (!(root instanceof Map<?, ?> top) || !(top.get("nftables") instanceof List<?> items)) {
            throw new Json.JsonException("not an nft listing: no \"nftables\" array");
        }
        int count = 0;
        for (Object item : items) {
            if (!(item instanceof Map<?, ?> w) || !(w.get("set") instanceof Map<?, ?> set) || !(set.get("elem") instanceof List<?> elems)) {
                continue;
            }
            for (Object e : elems) {
                count++;
                if (!(e instanceof Map<?, ?> em) || !(em.get("elem") instanceof Map<?, ?> elem)
                        || !(elem.get("val") instanceof Map<?, ?> val) || !(val.get("concat") instanceof List<?> key) || key.size() != 4) {
                    continue;
                }
                int protocol = protocol(key.get(2));
                if (protocol < 0 || !(key.get(3) instanceof Long port)) {
                    continue;
                }
                long packets = 0;
                long bytes = 0;
                if (elem.get("counter") instanceof Map<?, ?> c) {
                    packets = c.get("packets") instanceof Long p ? p : 0;
                    bytes = c.get("bytes") instanceof Long b ? b : 0;
                }
                Duration expires = elem.get("expires") instanceof Long s ? Duration.ofSeconds(s) : null;
                out.add(new CountedFlow(direction, IpAddress.parse(String.valueOf(key.get(0))), IpAddress.parse(String.valueOf(key.get(1))),
                        protocol, port.intValue(), packets, bytes, expires));
            }
        }
        return count;
    }

    private static int protocol(Object p) {
        if (p instanceof Long n) {
            return n.intValue();
        }
        return switch (String.valueOf(p)) {
            case "tcp" -> 6;
            case "udp" -> 17;
            case "sctp" -> 132;
            case "udplite" -> 136;
            default -> -1;
        };
    }
}
