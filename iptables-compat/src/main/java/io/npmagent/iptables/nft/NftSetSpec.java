package io.npmagent.iptables.nft;

import io.npmagent.iptables.model.Family;
import io.npmagent.iptables.model.SetId;

/**
 * What kind of set (or verdict map) an object is: its key type and whether it holds intervals. Its
 * {@link #signature()} is compared with what read-back reports, so a set left by another version of
 * the agent with another type is replaced rather than fed elements it cannot hold.
 *
 * @param map      a verdict map ({@code type T : verdict}) rather than a set
 * @param type     the key type as nft spells it ({@code ipv4_addr . inet_proto . inet_service})
 * @param interval {@code flags interval}: prefixes rather than single keys
 */
public record NftSetSpec(boolean map, String type, boolean interval) {

    /** Pod addresses of a selector set. */
    static NftSetSpec addresses(Family f) {
        return new NftSetSpec(false, addrType(f), false);
    }

    /** Prefixes: an ipBlock, or its excepts. */
    static NftSetSpec prefixes(Family f) {
        return new NftSetSpec(false, addrType(f), true);
    }

    /** (address, protocol, port) of pods serving a named port. */
    static NftSetSpec namedPort(Family f) {
        return new NftSetSpec(false, addrType(f) + " . inet_proto . inet_service", false);
    }

    /** A dispatch map: local pod address to {@code jump <pod chain>}. */
    static NftSetSpec dispatch(Family f) {
        return new NftSetSpec(true, addrType(f), false);
    }

    static NftSetSpec of(SetId id) {
        if (id instanceof SetId.Selector) {
            return addresses(id.family());
        }
        if (id instanceof SetId.Cidr) {
            return prefixes(id.family());
        }
        return namedPort(id.family());
    }

    /** The body of {@code add set|map TABLE NAME { ... }}. */
    String declaration() {
        return "{ type " + type + (map ? " : verdict" : "") + ";" + (interval ? " flags interval;" : "") + " }";
    }

    /** {@code set|map TYPE[ : verdict][ FLAG...]}, as {@link NftListing} builds it from read-back. */
    String signature() {
        return (map ? "map " : "set ") + type + (map ? " : verdict" : "") + (interval ? " interval" : "");
    }

    private static String addrType(Family f) {
        return f == Family.IPV4 ? "ipv4_addr" : "ipv6_addr";
    }
}
