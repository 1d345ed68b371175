package io.npmagent.bpf.maps;

import io.npmagent.dataplane.model.IpAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Byte layouts shared with the C structs: host-order (little-endian on every machine this runs on)
 * for the kernel's u32 and u64 fields, network order for addresses and ports, as the programs
 * read them from packets.
 */
final class Bytes {
    private Bytes() {}

    static ByteBuffer writer(int size) {
        return ByteBuffer.allocate(size).order(ByteOrder.nativeOrder());
    }

    static ByteBuffer reader(byte[] bytes, int size) {
        if (bytes.length < size) {
            throw new IllegalArgumentException("need " + size + " bytes, got " + bytes.length);
        }
        return ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder());
    }

    /** An address as the 16 bytes of the C structs: IPv4 in the first four, the rest zero. */
    static void putAddress(ByteBuffer b, IpAddress ip) {
        byte[] raw = ip.toBytes();
        b.put(raw);
        b.put(new byte[16 - raw.length]);
    }

    static IpAddress getAddress(ByteBuffer b, boolean v6) {
        byte[] raw = new byte[16];
        b.get(raw);
        if (!v6) {
            return IpAddress.v4(((raw[0] & 0xff) << 24) | ((raw[1] & 0xff) << 16) | ((raw[2] & 0xff) << 8) | (raw[3] & 0xff));
        }
        long hi = 0;
        long lo = 0;
        for (int i = 0; i < 8; i++) {
            hi = (hi << 8) | (raw[i] & 0xff);
            lo = (lo << 8) | (raw[8 + i] & 0xff);
        }
        return IpAddress.v6(hi, lo);
    }

    /** A port in network order, as __be16. */
    static void putPort(ByteBuffer b, int port) {
        b.put((byte) (port >>> 8)).put((byte) port);
    }

    static int getPort(ByteBuffer b) {
        return ((b.get() & 0xff) << 8) | (b.get() & 0xff);
    }
}
