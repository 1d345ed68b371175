package io.npmagent.bpf.maps;

import java.nio.ByteBuffer;

/**
 * {@code npm_policy} (policy.h): what each local endpoint's NetworkPolicies admit ({@link #ALLOW}
 * entries), and what each ClusterNetworkPolicy tier table decides ({@link #ALLOW}, {@link #DENY} or
 * {@link #NEXT}), about a peer, as longest-prefix-match entries; the "endpoint" field holds the
 * endpoint's id or the table's ({@code EndpointMap.Tiers}).
 * Fixed part (96 bits after the prefix length): version, direction, padding, endpoint, identity. An
 * entry of prefix 96 admits every protocol; 112 + k admits one protocol and the ports whose first k
 * bits equal the port's.
 */
public final class PolicyMap {
    public static final String NAME = "npm_policy";
    public static final int MAX_ENTRIES = 1048576;
    public static final int KEY_SIZE = 20;
    public static final int VALUE_SIZE = 4;
    /** Prefix length of an entry that admits every protocol. */
    public static final int ANY_PROTOCOL = 96;
    /** Prefix length of an entry for one protocol and every port; add the port prefix's bits. */
    public static final int ONE_PROTOCOL = 112;

    private PolicyMap() {}

    /**
     * struct npm_policy_key. For an any-protocol entry {@code protocol}, {@code port} and
     * {@code portBits} are 0.
     */
    public record Key(int version, int direction, int endpoint, int identity, boolean anyProtocol, int protocol, int port, int portBits) {
        public Key {
            if (anyProtocol && (protocol != 0 || port != 0 || portBits != 0)) {
                throw new IllegalArgumentException("an any-protocol entry has no protocol or port");
            }
            if (portBits < 0 || portBits > 16 || (portBits < 16 && (port & ((1 << (16 - portBits)) - 1)) != 0)) {
                throw new IllegalArgumentException("port " + port + " is not aligned to a /" + portBits + " prefix");
            }
        }

        public static Key anyProtocol(int version, int direction, int endpoint, int identity) {
            return new Key(version, direction, endpoint, identity, true, 0, 0, 0);
        }

        public static Key ports(int version, int direction, int endpoint, int identity, int protocol, int port, int portBits) {
            return new Key(version, direction, endpoint, identity, false, protocol, port, portBits);
        }

        public int prefixLength() {
            return anyProtocol ? ANY_PROTOCOL : ONE_PROTOCOL + portBits;
        }

        public byte[] encode() {
            ByteBuffer b = Bytes.writer(KEY_SIZE);
            b.putInt(prefixLength()).put((byte) version).put((byte) direction).put(new byte[2]).putInt(endpoint).putInt(identity);
            b.put((byte) protocol).put((byte) 0);
            Bytes.putPort(b, port);
            return b.array();
        }

        public static Key decode(byte[] bytes) {
            ByteBuffer b = Bytes.reader(bytes, KEY_SIZE);
            int prefixlen = b.getInt();
            int version = b.get() & 0xff;
            int direction = b.get() & 0xff;
            b.get();
            b.get();
            int endpoint = b.getInt();
            int identity = b.getInt();
            int protocol = b.get() & 0xff;
            b.get();
            int port = Bytes.getPort(b);
            return prefixlen <= ANY_PROTOCOL
                    ? anyProtocol(version, direction, endpoint, identity)
                    : ports(version, direction, endpoint, identity, protocol, port, prefixlen - ONE_PROTOCOL);
        }

        @Override
        public String toString() {
            String who = "v" + version + " endpoint " + endpoint + (direction == 0 ? " ingress" : " egress") + " identity "
                    + (identity == -1 ? "ANY" : Integer.toUnsignedString(identity));
            return anyProtocol ? who + " any" : who + " proto " + protocol + " port " + port + "/" + portBits;
        }
    }

    /** NPM_VERDICT_ALLOW: what an agent before tiers wrote in every entry. */
    public static final int ALLOW = 1;
    /** NPM_VERDICT_DENY (the programs deny any value but {@link #ALLOW} and {@link #NEXT}). */
    public static final int DENY = 2;
    /** NPM_VERDICT_NEXT, in a tier table's entries only: the tier passes the packet on (a {@code Pass} rule). */
    public static final int NEXT = 3;

    /** The low bits of a value that hold the verdict; the number of what decides it ({@code AttributionRefs}) is above them. */
    public static final int VERDICT_MASK = 3;
    public static final int REF_SHIFT = 2;
    /** The largest number a value can carry. */
    public static final int MAX_REF = (1 << (32 - REF_SHIFT)) - 1;

    /** A value's int: the verdict and the number of what decides it (0: none). */
    public static int packed(int verdict, int ref) {
        if (ref < 0 || ref > MAX_REF) {
            throw new IllegalArgumentException("attribution number out of range: " + ref);
        }
        return ref << REF_SHIFT | verdict;
    }

    /** The verdict of a value's int ({@link #ALLOW}, {@link #DENY}, {@link #NEXT}). */
    public static int verdictOf(int packed) {
        return packed & VERDICT_MASK;
    }

    /** The attribution number of a value's int. */
    public static int refOf(int packed) {
        return packed >>> REF_SHIFT;
    }

    /** struct npm_policy_value of a value's int ({@link #packed}: a verdict alone is one with no number). */
    public static byte[] value(int verdict) {
        return Bytes.writer(VALUE_SIZE).putInt(verdict).array();
    }

    public static int verdict(byte[] value) {
        return Bytes.reader(value, VALUE_SIZE).getInt();
    }
}
