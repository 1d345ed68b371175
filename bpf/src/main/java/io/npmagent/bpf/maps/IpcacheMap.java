package io.npmagent.bpf.maps;

import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.IpAddress;
import java.nio.ByteBuffer;

/**
 * {@code npm_ipcache} (peers.h): longest-prefix match from an address to its peer identity, per copy
 * of the state. The trie's prefix length counts the 32 bits of version, family and padding, which
 * always match whole, then the address bits.
 */
public final class IpcacheMap {
    public static final String NAME = "npm_ipcache";
    public static final int MAX_ENTRIES = 262144;
    public static final int KEY_SIZE = 24;
    public static final int VALUE_SIZE = 4;

    private IpcacheMap() {}

    /** struct npm_ipcache_key for a prefix (a pod's address is its /32 or /128). */
    public record Key(int version, Cidr prefix) {
        public byte[] encode() {
            ByteBuffer b = Bytes.writer(KEY_SIZE);
            b.putInt(32 + prefix.prefixLength()).put((byte) version).put((byte) (prefix.v6() ? 6 : 4)).put(new byte[2]);
            Bytes.putAddress(b, prefix.network());
            return b.array();
        }

        public static Key decode(byte[] bytes) {
            ByteBuffer b = Bytes.reader(bytes, KEY_SIZE);
            int prefixlen = b.getInt();
            int version = b.get() & 0xff;
            boolean v6 = b.get() == 6;
            b.get();
            b.get();
            IpAddress ip = Bytes.getAddress(b, v6);
            return new Key(version, new Cidr(ip, prefixlen - 32));
        }

        @Override
        public String toString() {
            return prefix + " v" + version;
        }
    }

    public static byte[] value(int identity) {
        return Bytes.writer(VALUE_SIZE).putInt(identity).array();
    }

    public static int identity(byte[] value) {
        return Bytes.reader(value, VALUE_SIZE).getInt();
    }
}
