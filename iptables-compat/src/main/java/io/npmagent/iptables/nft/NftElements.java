package io.npmagent.iptables.nft;

import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.iptables.model.Member;
import io.npmagent.iptables.model.SetId;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Set and map elements, both ways: a model {@link Member} as the script spells it, and an element as
 * {@code nft -j} prints it, normalised through the dataplane's own address types into that same
 * spelling. So {@code 10.0.0.7/32} written and {@code "10.0.0.7"} read back, or {@code fd00:0::1} and
 * {@code fd00::1}, are one element, and nft's formatting never looks like drift. Every text this class
 * returns is built from parsed values (addresses, prefix lengths, protocol names, numbers), so an
 * element read back can be written into a script safely.
 */
final class NftElements {
    private NftElements() {}

    /** A member as a script spells it: {@code 10.0.0.1}, {@code 10.0.0.0/8}, {@code 10.0.0.1 . tcp . 8080}. */
    static String text(Member m) {
        if (m instanceof Member.Host h) {
            return h.ip().toString();
        }
        if (m instanceof Member.Net n) {
            return prefix(n.cidr());
        }
        Member.HostPort hp = (Member.HostPort) m;
        return hp.ip() + " . " + hp.protocol().name().toLowerCase(Locale.ROOT) + " . " + hp.port();
    }

    /** A dispatch map element: {@code 10.0.0.1 : jump pod_in4_...}. */
    static String dispatch(IpAddress ip, String podChain) {
        return ip + " : jump " + podChain;
    }

    /** The key of an element: what {@code delete element} names (a map element without its verdict). */
    static String key(String element) {
        int colon = element.indexOf(" : ");
        return colon < 0 ? element : element.substring(0, colon);
    }

    /**
     * The nft sets a model set becomes, with their elements. A CIDR set becomes its prefixes ({@code c})
     * and, if the ipBlock has excepts, the excepts ({@code x}) with every except that lies inside another
     * left out: an nft interval set refuses overlapping elements, and the union is the same.
     */
    static Map<String, Set<String>> of(SetId id, Collection<Member> members) {
        Map<String, Set<String>> out = new TreeMap<>();
        if (!(id instanceof SetId.Cidr c)) {
            Set<String> texts = new TreeSet<>();
            members.forEach(m -> texts.add(text(m)));
            out.put(NftNames.set(id), texts);
            return out;
        }
        Set<String> included = new TreeSet<>();
        List<Cidr> excluded = new ArrayList<>();
        for (Member m : members) {
            Member.Net n = (Member.Net) m;
            if (n.excluded()) {
                excluded.add(n.cidr());
            } else {
                included.add(prefix(n.cidr()));
            }
        }
        out.put(NftNames.set(id), included);
        if (!c.key().except().isEmpty()) {
            Set<String> outermost = new TreeSet<>();
            for (Cidr e : excluded) {
                if (excluded.stream().noneMatch(o -> !o.equals(e) && o.contains(e))) {
                    outermost.add(prefix(e));
                }
            }
            out.put(NftNames.excepts(c), outermost);
        }
        return out;
    }

    /** A prefix as nft prints it in an interval set: a host prefix is just the address. */
    static String prefix(Cidr c) {
        return c.prefixLength() == c.network().bitLength() ? c.network().toString() : c.toString();
    }

    /**
     * A set element as {@code nft -j} prints it ({@code "10.0.0.1"}, {@code {"prefix": ...}},
     * {@code {"range": ...}}, {@code {"concat": [...]}}, or any of those wrapped in {@code {"elem": {"val": ...}}}),
     * in this class's spelling; empty if it is nothing this agent could have written.
     */
    static Optional<String> fromJson(Object v) {
        try {
            if (v instanceof String s) {
                return Optional.of(IpAddress.parse(s).toString());
            }
            if (!(v instanceof Map<?, ?> m) || m.size() != 1) {
                return Optional.empty();
            }
            Object inner = m.values().iterator().next();
            if (m.containsKey("elem") && inner instanceof Map<?, ?> e) {
                return fromJson(e.get("val"));
            }
            if (m.containsKey("prefix") && inner instanceof Map<?, ?> p
                    && p.get("addr") instanceof String addr && p.get("len") instanceof Long len) {
                return Optional.of(prefix(new Cidr(IpAddress.parse(addr), Math.toIntExact(len))));
            }
            if (m.containsKey("range") && inner instanceof List<?> r && r.size() == 2
                    && r.get(0) instanceof String lo && r.get(1) instanceof String hi) {
                return Optional.of(IpAddress.parse(lo) + "-" + IpAddress.parse(hi));
            }
            if (m.containsKey("concat") && inner instanceof List<?> parts && parts.size() == 3
                    && parts.get(0) instanceof String ip) {
                Protocol protocol = protocol(parts.get(1));
                int port = port(parts.get(2));
                return Optional.of(text(new Member.HostPort(IpAddress.parse(ip), protocol, port)));
            }
        } catch (RuntimeException e) {
            // An element this agent never writes: the caller replaces the set.
        }
        return Optional.empty();
    }

    /** A verdict map element ({@code ["10.0.0.1", {"jump": {"target": "pod_in4_..."}}]}), or empty. */
    static Optional<String> dispatchFromJson(Object v) {
        if (v instanceof Map<?, ?> m && m.size() == 1 && m.get("elem") instanceof Map<?, ?> e) {
            return dispatchFromJson(e.get("val"));
        }
        if (!(v instanceof List<?> pair) || pair.size() != 2 || !(pair.get(0) instanceof String addr)) {
            return Optional.empty();
        }
        if (!(pair.get(1) instanceof Map<?, ?> verdict) || !(verdict.get("jump") instanceof Map<?, ?> jump)
                || !(jump.get("target") instanceof String target) || !NftNames.ours(target)) {
            return Optional.empty();
        }
        try {
            return Optional.of(dispatch(IpAddress.parse(addr), target));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    private static Protocol protocol(Object v) {
        if (v instanceof String s) {
            return Protocol.parse(s.toUpperCase(Locale.ROOT));
        }
        if (v instanceof Long n) {
            for (Protocol p : Protocol.values()) {
                if (p.ipProtocolNumber() == n) {
                    return p;
                }
            }
        }
        throw new IllegalArgumentException("not a protocol of ours: " + v);
    }

    private static int port(Object v) {
        long n = v instanceof Long l ? l : Long.parseLong((String) v);
        if (n < 0 || n > 65535) {
            throw new IllegalArgumentException("port out of range: " + n);
        }
        return (int) n;
    }
}
