package io.npmagent.iptables.model;

import io.npmagent.dataplane.model.Direction;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Kernel object names: a fixed prefix that marks the object as the agent's ({@code NPM-} chains,
 * {@code npm-} sets), then a hash of what the object is. Hashes, not object names: names are
 * untrusted and long, kernel names are short (28 characters for an iptables chain, 31 for an ipset).
 * 80 bits of SHA-256 make a collision unlikely; {@link #claim} still detects one, and the object that
 * loses is refused rather than sharing a name.
 */
public final class Names {
    public static final String CHAIN_PREFIX = "NPM-";
    public static final String SET_PREFIX = "npm-";
    public static final String FORWARD_CHAIN = "NPM-FORWARD";
    /** The chain INPUT jumps to: local pods' connections to their own node. */
    public static final String INPUT_CHAIN = "NPM-INPUT";
    private static final char[] BASE32 = "abcdefghijklmnopqrstuvwxyz234567".toCharArray();

    private final Map<String, Object> owners = new HashMap<>();

    /** iptables chain name (at most 28 characters). */
    public static String chain(ChainId id) {
        if (id instanceof ChainId.Dispatch d) {
            return d.direction() == Direction.INGRESS ? "NPM-INGRESS" : "NPM-EGRESS";
        }
        if (id instanceof ChainId.PolicyChain p) {
            String kind = p.direction() == Direction.INGRESS ? "NPM-PI-" : "NPM-PE-";
            return kind + hash("policy:" + qualified(p.policy().namespace(), p.policy().name()), 16).toUpperCase(Locale.ROOT);
        }
        if (id instanceof ChainId.ClusterPolicyChain p) {
            String kind = p.direction() == Direction.INGRESS ? "NPM-CI-" : "NPM-CE-";
            return kind + clusterPolicyHash(p.policy()).toUpperCase(Locale.ROOT);
        }
        ChainId.PodChain c = (ChainId.PodChain) id;
        String kind = c.direction() == Direction.INGRESS ? "NPM-I-" : "NPM-E-";
        return kind + hash("pod:" + qualified(c.pod().namespace(), c.pod().name()), 16).toUpperCase(Locale.ROOT);
    }

    /**
     * A ClusterNetworkPolicy's name as 16 hash characters. Its own prefix in the hashed text, so it never
     * equals a NetworkPolicy's or a pod's hash (cluster-scoped names have no namespace to tell them apart).
     */
    public static String clusterPolicyHash(String name) {
        return hash("clusterpolicy:" + name, 16);
    }

    /** {@code namespace/name} with the namespace's length first, so no two pairs spell the same text. */
    private static String qualified(String namespace, String name) {
        return namespace.length() + ":" + namespace + "/" + name;
    }

    /** ipset name (at most 31 characters): {@code npm-s4-...} selector, {@code c} CIDR, {@code n} named port. */
    public static String ipset(SetId id) {
        char kind = id instanceof SetId.Selector ? 's' : id instanceof SetId.Cidr ? 'c' : 'n';
        return SET_PREFIX + kind + id.family().digit() + "-" + hash(id.canonical(), 20);
    }

    /** A hash of {@code text}: {@code chars} base32 characters (5 bits each) of its SHA-256. */
    public static String hash(String text, int chars) {
        byte[] digest;
        try {
            digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
        StringBuilder sb = new StringBuilder(chars);
        int buffer = 0;
        int bits = 0;
        int i = 0;
        while (sb.length() < chars) {
            if (bits < 5) {
                buffer = (buffer << 8) | (digest[i++] & 0xff);
                bits += 8;
            }
            sb.append(BASE32[(buffer >>> (bits - 5)) & 31]);
            bits -= 5;
        }
        return sb.toString();
    }

    /**
     * Records that {@code owner} uses {@code name}; throws {@link NameCollisionException} if another
     * owner has it.
     */
    public String claim(String name, Object owner) {
        Object there = owners.putIfAbsent(name, owner);
        if (there != null && !there.equals(owner)) {
            throw new NameCollisionException(name, there, owner);
        }
        return name;
    }

    public void release(String name, Object owner) {
        owners.remove(name, owner);
    }

    /** Forgets every claim: before a full comparison, which claims again for every object that exists. */
    public void clear() {
        owners.clear();
    }

    /** Two objects hash to one kernel name: the later one cannot be rendered. */
    public static final class NameCollisionException extends RuntimeException {
        public NameCollisionException(String name, Object holder, Object claimant) {
            super("kernel name " + name + " of " + claimant + " is already used by " + holder);
        }
    }
}
