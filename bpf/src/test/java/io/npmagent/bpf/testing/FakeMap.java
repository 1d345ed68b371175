package io.npmagent.bpf.testing;

import io.npmagent.bpf.libbpf.BpfException;
import io.npmagent.bpf.libbpf.MapIo;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An in-memory map with the kernel's semantics where the writer depends on them: a full map refuses a
 * new key (E2BIG), a batch applies its elements in order and one refused stops it with the ones before
 * it applied, deleting a missing key is no error. {@link Faults} refuses the operation it is told to,
 * counting every element of a batch, every lookup and every walk, across all maps that share it.
 */
public final class FakeMap implements MapIo {
    private static final int E2BIG = 7;
    private static final int EIO = 5;

    private final String name;
    private final int maxEntries;
    private final Faults faults;
    private final Map<ByteBuffer, byte[]> entries = new LinkedHashMap<>();

    /** The next refusal, shared by the maps of one backend. */
    public static final class Faults {
        private int countdown = -1;
        private int operations;

        /** The {@code n}-th operation from now (0: the next) is refused; none after it. */
        public void refuseOperation(int n) {
            countdown = n;
        }

        public void none() {
            countdown = -1;
        }

        /** Operations seen so far, refused or not. */
        public int operations() {
            return operations;
        }

        void check(String map, String operation) {
            operations++;
            if (countdown >= 0 && countdown-- == 0) {
                throw new BpfException(operation, map, EIO, "Input/output error (injected)");
            }
        }
    }

    public FakeMap(String name, int maxEntries, Faults faults) {
        this.name = name;
        this.maxEntries = maxEntries;
        this.faults = faults;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public byte[] lookup(byte[] key) {
        faults.check(name, "bpf_map_lookup_elem");
        byte[] v = entries.get(ByteBuffer.wrap(key));
        return v == null ? null : v.clone();
    }

    @Override
    public void update(byte[] key, byte[] value) {
        faults.check(name, "bpf_map_update_elem");
        put(key, value);
    }

    @Override
    public int updateBatch(List<byte[]> keys, List<byte[]> values) {
        for (int i = 0; i < keys.size(); i++) {
            faults.check(name, "bpf_map_update_batch");
            put(keys.get(i), values.get(i));
        }
        return keys.size();
    }

    @Override
    public int deleteBatch(List<byte[]> keys) {
        int deleted = 0;
        for (byte[] key : keys) {
            faults.check(name, "bpf_map_delete_batch");
            if (entries.remove(ByteBuffer.wrap(key.clone())) != null) {
                deleted++;
            }
        }
        return deleted;
    }

    @Override
    public List<byte[][]> entries() {
        faults.check(name, "bpf_map_get_next_key");
        List<byte[][]> out = new ArrayList<>();
        entries.forEach((k, v) -> out.add(new byte[][] {bytes(k), v.clone()}));
        return out;
    }

    @Override
    public int maxEntries() {
        return maxEntries;
    }

    /** What the map holds, for assertions (no operation counted). */
    public List<byte[][]> contents() {
        List<byte[][]> out = new ArrayList<>();
        entries.forEach((k, v) -> out.add(new byte[][] {bytes(k), v.clone()}));
        return out;
    }

    private void put(byte[] key, byte[] value) {
        ByteBuffer k = ByteBuffer.wrap(key.clone());
        if (!entries.containsKey(k) && entries.size() >= maxEntries) {
            throw new BpfException("bpf_map_update_elem", name, E2BIG, "Argument list too long");
        }
        entries.put(k, value.clone());
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    @Override
    public String toString() {
        return name + " (in memory, " + entries.size() + " entries)";
    }
}
