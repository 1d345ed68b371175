package io.npmagent.dataplane.model;

/**
 * An IP prefix, always held in canonical form (host bits cleared).
 *
 * <p>{@link #parse} accepts what the API server accepts for {@code ipBlock}: a prefix whose host
 * bits are set is taken as the network it names ({@code 10.244.1.10/4} is {@code 0.0.0.0/4}), as Go's
 * {@code net.ParseCIDR} does.
 */
public record Cidr(IpAddress network, int prefixLength) implements Comparable<Cidr> {

    public Cidr {
        if (prefixLength < 0 || prefixLength > network.bitLength()) {
            throw new IllegalArgumentException("prefix length " + prefixLength + " out of range");
        }
        network = network.masked(prefixLength);
    }

    public static Cidr parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("missing CIDR");
        }
        int slash = text.indexOf('/');
        if (slash < 0) {
            throw new IllegalArgumentException(ApiSyntax.quote(text) + " is not a CIDR (no prefix length)");
        }
        IpAddress ip;
        try {
            ip = IpAddress.parse(text.substring(0, slash));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(ApiSyntax.quote(text) + " is not a valid CIDR", e);
        }
        String len = text.substring(slash + 1);
        if (len.isEmpty() || len.length() > 3 || !len.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new IllegalArgumentException(ApiSyntax.quote(text) + " is not a valid CIDR (bad prefix length)");
        }
        int prefix = Integer.parseInt(len);
        if (prefix > ip.bitLength()) {
            throw new IllegalArgumentException(ApiSyntax.quote(text) + " is not a valid CIDR (prefix longer than the address)");
        }
        return new Cidr(ip, prefix);
    }

    public static Cidr host(IpAddress ip) {
        return new Cidr(ip, ip.bitLength());
    }

    public boolean v6() {
        return network.v6();
    }

    public boolean contains(IpAddress ip) {
        return ip.v6() == network.v6() && ip.masked(prefixLength).equals(network);
    }

    /** True if every address of {@code other} is in this prefix. */
    public boolean contains(Cidr other) {
        return other.v6() == v6() && other.prefixLength >= prefixLength && contains(other.network);
    }

    @Override
    public int compareTo(Cidr o) {
        int c = network.compareTo(o.network);
        return c != 0 ? c : Integer.compare(prefixLength, o.prefixLength);
    }

    @Override
    public String toString() {
        return network + "/" + prefixLength;
    }
}
