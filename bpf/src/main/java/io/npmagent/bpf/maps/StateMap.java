package io.npmagent.bpf.maps;

/** {@code npm_state} (state.h): which copy of the versioned maps packets read. */
public final class StateMap {
    public static final String NAME = "npm_state";
    public static final int KEY_SIZE = 4;
    public static final int VALUE_SIZE = 4;

    private StateMap() {}

    public static byte[] key() {
        return Bytes.writer(KEY_SIZE).putInt(0).array();
    }

    public static byte[] value(int version) {
        return Bytes.writer(VALUE_SIZE).putInt(version & 1).array();
    }

    public static int version(byte[] value) {
        return Bytes.reader(value, VALUE_SIZE).getInt() & 1;
    }
}
