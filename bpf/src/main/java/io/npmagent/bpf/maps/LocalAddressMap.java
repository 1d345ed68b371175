package io.npmagent.bpf.maps;

import io.npmagent.dataplane.model.IpAddress;
import java.nio.ByteBuffer;

/**
 * {@code npm_local} (forward.h): a local pod's address to its interface (its {@code npm_endpoints} key),
 * per copy of the state. Where pods sit on a bridge, the forward hook finds by it the pod a translated
 * connection goes to: the way out it sees is the bridge, not the pod's interface.
 */
public final class LocalAddressMap {
    public static final String NAME = "npm_local";
    public static final int MAX_ENTRIES = 8192;
    public static final int KEY_SIZE = 20;
    public static final int VALUE_SIZE = 4;

    private LocalAddressMap() {}

    /** struct npm_local_key. */
    public record Key(int version, IpAddress address) {
        public byte[] encode() {
            ByteBuffer b = Bytes.writer(KEY_SIZE);
            b.put((byte) version).put((byte) (address.v6() ? 6 : 4)).put(new byte[2]);
            Bytes.putAddress(b, address);
            return b.array();
        }

        public static Key decode(byte[] bytes) {
            ByteBuffer b = Bytes.reader(bytes, KEY_SIZE);
            int version = b.get() & 0xff;
            boolean v6 = b.get() == 6;
            b.get();
            b.get();
            return new Key(version, Bytes.getAddress(b, v6));
        }

        @Override
        public String toString() {
            return address + " v" + version;
        }
    }

    public static byte[] value(int ifindex) {
        return Bytes.writer(VALUE_SIZE).putInt(ifindex).array();
    }

    public static int ifindex(byte[] value) {
        return Bytes.reader(value, VALUE_SIZE).getInt();
    }
}
