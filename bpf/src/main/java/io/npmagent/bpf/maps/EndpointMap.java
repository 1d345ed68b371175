package io.npmagent.bpf.maps;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** {@code npm_endpoints} (endpoint.h): interface to local pod endpoint, per copy of the state. */
public final class EndpointMap {
    public static final String NAME = "npm_endpoints";
    public static final int MAX_ENTRIES = 4096;
    public static final int KEY_SIZE = 8;
    public static final int VALUE_SIZE = 40;
    /** TCP_CA_NAME_MAX: a congestion control's name with its NUL. */
    public static final int CONGESTION_SIZE = 16;

    private EndpointMap() {}

    /** struct npm_endpoint_key. */
    public record Key(int ifindex, int version) {
        public byte[] encode() {
            return Bytes.writer(KEY_SIZE).putInt(ifindex).put((byte) version).put(new byte[3]).array();
        }

        public static Key decode(byte[] bytes) {
            ByteBuffer b = Bytes.reader(bytes, KEY_SIZE);
            return new Key(b.getInt(), b.get() & 0xff);
        }

        @Override
        public String toString() {
            return "ifindex " + ifindex + " v" + version;
        }
    }

    /**
     * npm_endpoint.judged for one direction (endpoint.h): whether anything judges it, and what a peer and
     * port the pod's policy entries do not cover gets there. {@link #OPEN} and {@link #MISS_DENIED} are
     * what an agent before tiers wrote (not isolated, isolated).
     */
    public enum Judged {
        /** Nothing judges the direction: everything passes. */
        OPEN,
        /** Judged; a miss is dropped (NetworkPolicy isolation, or a walk that denies a peer no rule names). */
        MISS_DENIED,
        /** Judged; a miss passes (a ClusterNetworkPolicy has a say, and a peer no rule names is allowed). */
        MISS_ALLOWED;

        public static Judged of(boolean isolated) {
            return isolated ? MISS_DENIED : OPEN;
        }

        static Judged decode(byte b) {
            return b == 0 ? OPEN : b == 2 ? MISS_ALLOWED : MISS_DENIED; // as the programs read it
        }
    }

    /**
     * struct npm_endpoint: the endpoint id, by direction (0 ingress, 1 egress) whether it is judged and
     * what a miss gets there, its rate limits in bits per second (0: none) and the congestion control
     * its TCP connections get (null: the default; an ASCII name of at most 15 characters, NUL-padded).
     */
    public record Value(int id, Judged ingress, Judged egress, long ingressRate, long egressRate, String congestion) {
        public Value {
            if (ingress == null || egress == null) {
                throw new IllegalArgumentException("judged must be set for both directions");
            }
            if (congestion != null && (congestion.isEmpty() || congestion.length() >= CONGESTION_SIZE
                    || !congestion.chars().allMatch(c -> c > ' ' && c < 0x7f))) {
                throw new IllegalArgumentException("not a congestion control name: " + congestion);
            }
        }

        /** An endpoint only NetworkPolicies judge (isolated: a miss is dropped). */
        public Value(int id, boolean ingressIsolated, boolean egressIsolated, long ingressRate, long egressRate, String congestion) {
            this(id, Judged.of(ingressIsolated), Judged.of(egressIsolated), ingressRate, egressRate, congestion);
        }

        /** An endpoint only NetworkPolicies judge, with the default congestion control. */
        public Value(int id, boolean ingressIsolated, boolean egressIsolated, long ingressRate, long egressRate) {
            this(id, ingressIsolated, egressIsolated, ingressRate, egressRate, null);
        }

        public byte[] encode() {
            byte[] name = new byte[CONGESTION_SIZE];
            if (congestion != null) {
                byte[] ascii = congestion.getBytes(StandardCharsets.US_ASCII);
                System.arraycopy(ascii, 0, name, 0, ascii.length);
            }
            return Bytes.writer(VALUE_SIZE).putInt(id).put((byte) ingress.ordinal()).put((byte) egress.ordinal())
                    .put(new byte[2]).putLong(ingressRate).putLong(egressRate).put(name).array();
        }

        public static Value decode(byte[] bytes) {
            ByteBuffer b = Bytes.reader(bytes, VALUE_SIZE);
            int id = b.getInt();
            Judged ingress = Judged.decode(b.get());
            Judged egress = Judged.decode(b.get());
            b.position(8);
            long ingressRate = b.getLong();
            long egressRate = b.getLong();
            int len = 0;
            while (len < CONGESTION_SIZE - 1 && bytes[24 + len] != 0) {
                len++;
            }
            String congestion = len == 0 ? null : new String(bytes, 24, len, StandardCharsets.US_ASCII);
            return new Value(id, ingress, egress, ingressRate, egressRate, congestion);
        }

        @Override
        public String toString() {
            return "endpoint " + id + judged(" ingress", ingress) + judged(" egress", egress)
                    + (ingressRate != 0 ? " ingress " + ingressRate + " bit/s" : "") + (egressRate != 0 ? " egress " + egressRate + " bit/s" : "")
                    + (congestion != null ? " tcp " + congestion : "");
        }

        private static String judged(String direction, Judged j) {
            return switch (j) {
                case OPEN -> "";
                case MISS_DENIED -> direction + "-isolated";
                case MISS_ALLOWED -> direction + "-judged";
            };
        }
    }
}
