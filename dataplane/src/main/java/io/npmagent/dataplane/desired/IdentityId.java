package io.npmagent.dataplane.desired;

/**
 * A node-local number for an {@link Identity}. Numbers are reused after release, lowest first, so they
 * stay small (they are map keys in eBPF). They differ between agents and between runs: only the
 * identity they stand for has meaning.
 */
public record IdentityId(int value) implements Comparable<IdentityId> {
    /** Numbers below this are reserved for backends (world, host, CIDR identities may live there). */
    public static final int FIRST = 256;

    @Override
    public int compareTo(IdentityId o) {
        return Integer.compare(value, o.value);
    }

    @Override
    public String toString() {
        return "id" + value;
    }
}
