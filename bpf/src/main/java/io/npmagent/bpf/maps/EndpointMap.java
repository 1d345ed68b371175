package io.npmagent.bpf.maps;

import java.nio.ByteBuffer;

/** {@code npm_endpoints} (endpoint.h): interface to local pod endpoint, per copy of the state. */
public final class EndpointMap {
    public static final String NAME = "npm_endpoints";
    public static final int MAX_ENTRIES = 4096;
    public static final int KEY_SIZE = 8;
    public static final int VALUE_SIZE = 24;

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
     * struct npm_endpoint: the endpoint id, by direction (0 ingress, 1 egress) whether it is isolated,
     * and its rate limits in bits per second (0: none).
     */
    public record Value(int id, boolean ingressIsolated, boolean egressIsolated, long ingressRate, long egressRate) {
        public byte[] encode() {
            return Bytes.writer(VALUE_SIZE).putInt(id).put((byte) (ingressIsolated ? 1 : 0)).put((byte) (egressIsolated ? 1 : 0))
                    .put(new byte[2]).putLong(ingressRate).putLong(egressRate).array();
        }

        public static Value decode(byte[] bytes) {
            ByteBuffer b = Bytes.reader(bytes, VALUE_SIZE);
            int id = b.getInt();
            boolean ingress = b.get() != 0;
            boolean egress = b.get() != 0;
            b.position(8);
            return new Value(id, ingress, egress, b.getLong(), b.getLong());
        }

        @Override
        public String toString() {
            return "endpoint " + id + (ingressIsolated ? " ingress-isolated" : "") + (egressIsolated ? " egress-isolated" : "")
                    + (ingressRate != 0 ? " ingress " + ingressRate + " bit/s" : "") + (egressRate != 0 ? " egress " + egressRate + " bit/s" : "");
        }
    }
}
