package io.npmagent.bpf.maps;

import io.npmagent.dataplane.model.IpAddress;
import java.nio.ByteBuffer;

/** {@code npm_ct} (ct.h): the flows each endpoint allowed, for replies and established traffic. */
public final class CtMap {
    public static final String NAME = "npm_ct";
    public static final int MAX_ENTRIES = 262144;
    public static final int KEY_SIZE = 44;
    public static final int VALUE_SIZE = 16;

    private CtMap() {}

    /** struct npm_ct_key. */
    public record Key(int endpoint, int protocol, int sport, int dport, IpAddress saddr, IpAddress daddr) {
        public byte[] encode() {
            ByteBuffer b = Bytes.writer(KEY_SIZE);
            b.putInt(endpoint).put((byte) (saddr.v6() ? 6 : 4)).put((byte) protocol);
            Bytes.putPort(b, sport);
            Bytes.putPort(b, dport);
            b.put(new byte[2]);
            Bytes.putAddress(b, saddr);
            Bytes.putAddress(b, daddr);
            return b.array();
        }

        public static Key decode(byte[] bytes) {
            ByteBuffer b = Bytes.reader(bytes, KEY_SIZE);
            int endpoint = b.getInt();
            boolean v6 = b.get() == 6;
            int protocol = b.get() & 0xff;
            int sport = Bytes.getPort(b);
            int dport = Bytes.getPort(b);
            b.get();
            b.get();
            return new Key(endpoint, protocol, sport, dport, Bytes.getAddress(b, v6), Bytes.getAddress(b, v6));
        }
    }

    /** struct npm_ct_value; {@code closing}: the NPM_CT_FIN_* and NPM_CT_RST bits of ct.h. */
    public record Value(long lastSeenNanos, int direction, int closing) {
        public byte[] encode() {
            return Bytes.writer(VALUE_SIZE).putLong(lastSeenNanos).put((byte) direction).put((byte) closing).put(new byte[6]).array();
        }

        public static Value decode(byte[] bytes) {
            ByteBuffer b = Bytes.reader(bytes, VALUE_SIZE);
            return new Value(b.getLong(), b.get() & 0xff, b.get() & 0xff);
        }
    }
}
