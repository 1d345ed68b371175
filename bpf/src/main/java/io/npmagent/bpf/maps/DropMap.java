package io.npmagent.bpf.maps;

import java.nio.ByteBuffer;

/** {@code npm_drops} (drop.h): packets and bytes dropped by policy, per endpoint and direction, per CPU. */
public final class DropMap {
    public static final String NAME = "npm_drops";
    public static final int MAX_ENTRIES = 8192;
    public static final int KEY_SIZE = 8;
    public static final int VALUE_SIZE = 16;

    private DropMap() {}

    /** struct npm_drop_key. */
    public record Key(int endpoint, int direction) {
        public byte[] encode() {
            return Bytes.writer(KEY_SIZE).putInt(endpoint).put((byte) direction).put(new byte[3]).array();
        }

        public static Key decode(byte[] bytes) {
            ByteBuffer b = Bytes.reader(bytes, KEY_SIZE);
            return new Key(b.getInt(), b.get() & 0xff);
        }
    }

    /** The sum over CPUs of a per-CPU value (each CPU's struct npm_drop_value, 8-byte aligned). */
    public record Value(long packets, long bytes) {
        public static Value sumPerCpu(byte[] perCpu) {
            ByteBuffer b = Bytes.reader(perCpu, 0);
            long packets = 0;
            long bytes = 0;
            for (int off = 0; off + VALUE_SIZE <= perCpu.length; off += VALUE_SIZE) {
                packets += b.getLong(off);
                bytes += b.getLong(off + 8);
            }
            return new Value(packets, bytes);
        }
    }
}
