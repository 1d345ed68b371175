package io.npmagent.bpf.maps;

import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.IpAddress;
import java.nio.ByteBuffer;

/**
 * {@code npm_ipcache} (peers.h): longest-prefix match from an address to its peer class and the atom the
 * policy lookup falls back to, per copy of the state. The trie's prefix length counts the 32 bits of
 * version, family and padding, which always match whole, then the address bits.
 */
public final class IpcacheMap {
    public static final String NAME = "npm_ipcache";
    /** Both copies of 150,000 dual-stack pods' addresses, and room beside (peers.h); 262,144 held two copies of at most 131,072. */
    public static final int MAX_ENTRIES = 1048576;
    public static final int KEY_SIZE = 24;
    public static final int VALUE_SIZE = 8;
    /** {@code NPM_ATOM_NONE}: a value's atom for an address in no atom, or whose class is the atom itself. */
    public static final int NO_ATOM = 0;

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

    /**
     * struct npm_ipcache_value: the peer class ({@code identity}) and the atom looked up where the class has
     * no policy entry ({@link #NO_ATOM}: none).
     */
    public record Value(int identity, int atom) {
        /** A value with no atom to fall back to: an atom prefix's own, an address in no atom, the node's. */
        public static Value of(int identity) {
            return new Value(identity, NO_ATOM);
        }

        public byte[] encode() {
            return Bytes.writer(VALUE_SIZE).putInt(identity).putInt(atom).array();
        }

        public static Value decode(byte[] bytes) {
            ByteBuffer b = Bytes.reader(bytes, VALUE_SIZE);
            return new Value(b.getInt(), b.getInt());
        }

        @Override
        public String toString() {
            return atom == NO_ATOM ? Integer.toHexString(identity) : Integer.toHexString(identity) + " in " + Integer.toHexString(atom);
        }
    }
}
