package io.npmagent.bpf.maps;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** {@code npm_endpoints} (endpoint.h): interface to local pod endpoint, per copy of the state. */
public final class EndpointMap {
    public static final String NAME = "npm_endpoints";
    public static final int MAX_ENTRIES = 4096;
    public static final int KEY_SIZE = 8;
    public static final int VALUE_SIZE = 64;
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
        /** Judged; NetworkPolicy isolates the pod: what the Admin tier hands on and its entries do not admit is dropped. */
        MISS_DENIED,
        /** Judged by ClusterNetworkPolicy tiers alone (NetworkPolicy does not isolate): what no tier decides passes. */
        MISS_ALLOWED;

        public static Judged of(boolean isolated) {
            return isolated ? MISS_DENIED : OPEN;
        }

        static Judged decode(byte b) {
            return b == 0 ? OPEN : b == 2 ? MISS_ALLOWED : MISS_DENIED; // as the programs read it
        }
    }

    /**
     * npm_endpoint.tiers: per direction, the policy map tables of the ClusterNetworkPolicy tier lists the
     * pod's side walks, Admin and Baseline (0: no list). A table's entries are keyed by its number where an
     * endpoint's are keyed by the endpoint's id; pods whose lists are the same share one.
     */
    public record Tiers(int ingressAdmin, int ingressBaseline, int egressAdmin, int egressBaseline) {
        public static final Tiers NONE = new Tiers(0, 0, 0, 0);

        public int admin(int direction) {
            return direction == 0 ? ingressAdmin : egressAdmin;
        }

        public int baseline(int direction) {
            return direction == 0 ? ingressBaseline : egressBaseline;
        }

        @Override
        public String toString() {
            return "tiers ingress " + Integer.toUnsignedString(ingressAdmin) + "/" + Integer.toUnsignedString(ingressBaseline)
                    + " egress " + Integer.toUnsignedString(egressAdmin) + "/" + Integer.toUnsignedString(egressBaseline);
        }
    }

    /**
     * npm_endpoint.isolation: per direction, the number ({@code AttributionRefs}) of the NetworkPolicies that
     * isolate the pod, which a default deny's flow report carries (0: none, or not isolated).
     */
    public record Isolation(int ingress, int egress) {
        public static final Isolation NONE = new Isolation(0, 0);

        public int of(int direction) {
            return direction == 0 ? ingress : egress;
        }
    }

    /**
     * struct npm_endpoint: the endpoint id, by direction (0 ingress, 1 egress) whether it is judged and
     * what a miss gets there, its rate limits in bits per second (0: none), the congestion control
     * its TCP connections get (null: the default; an ASCII name of at most 15 characters, NUL-padded) and
     * its ClusterNetworkPolicy tier tables and its isolation's numbers.
     */
    public record Value(int id, Judged ingress, Judged egress, long ingressRate, long egressRate, String congestion, Tiers tiers,
            Isolation isolation) {
        public Value {
            if (tiers == null) {
                throw new IllegalArgumentException("tiers must be set (Tiers.NONE: none)");
            }
            if (isolation == null) {
                throw new IllegalArgumentException("isolation must be set (Isolation.NONE: none)");
            }
            if (ingress == null || egress == null) {
                throw new IllegalArgumentException("judged must be set for both directions");
            }
            if (congestion != null && (congestion.isEmpty() || congestion.length() >= CONGESTION_SIZE
                    || !congestion.chars().allMatch(c -> c > ' ' && c < 0x7f))) {
                throw new IllegalArgumentException("not a congestion control name: " + congestion);
            }
        }

        /** An endpoint whose default denies carry no number. */
        public Value(int id, Judged ingress, Judged egress, long ingressRate, long egressRate, String congestion, Tiers tiers) {
            this(id, ingress, egress, ingressRate, egressRate, congestion, tiers, Isolation.NONE);
        }

        /** An endpoint no ClusterNetworkPolicy selects. */
        public Value(int id, Judged ingress, Judged egress, long ingressRate, long egressRate, String congestion) {
            this(id, ingress, egress, ingressRate, egressRate, congestion, Tiers.NONE);
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
                    .put(new byte[2]).putLong(ingressRate).putLong(egressRate).put(name)
                    .putInt(tiers.ingressAdmin()).putInt(tiers.ingressBaseline()).putInt(tiers.egressAdmin()).putInt(tiers.egressBaseline())
                    .putInt(isolation.ingress()).putInt(isolation.egress()).array();
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
            b.position(24 + CONGESTION_SIZE);
            Tiers tiers = new Tiers(b.getInt(), b.getInt(), b.getInt(), b.getInt());
            Isolation isolation = new Isolation(b.getInt(), b.getInt());
            return new Value(id, ingress, egress, ingressRate, egressRate, congestion, tiers, isolation);
        }

        @Override
        public String toString() {
            return "endpoint " + id + judged(" ingress", ingress) + judged(" egress", egress)
                    + (ingressRate != 0 ? " ingress " + ingressRate + " bit/s" : "") + (egressRate != 0 ? " egress " + egressRate + " bit/s" : "")
                    + (congestion != null ? " tcp " + congestion : "") + (tiers.equals(Tiers.NONE) ? "" : " " + tiers)
                    + (isolation.equals(Isolation.NONE) ? "" : " isolation " + isolation.ingress() + "/" + isolation.egress());
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
