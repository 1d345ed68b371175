package io.npmagent.bpf.libbpf;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import jnr.ffi.Pointer;
import jnr.ffi.byref.IntByReference;

/**
 * One BPF map, by file descriptor: raw keys and values in, raw keys and values out. The classes in
 * {@code io.npmagent.bpf.maps} give the bytes meaning; this one only moves them.
 *
 * <p><b>Ownership.</b> A handle owns its descriptor (a duplicate of libbpf's, for a map of a
 * {@link BpfObject}) and closes it in {@link #close()}; the map itself lives on while it is pinned or
 * used by a loaded program. After {@code close()} every operation fails with EBADF: the descriptor
 * number is forgotten, so it can never reach an unrelated object that reuses it.
 *
 * <p><b>Sizes.</b> Keys must be {@link #keySize()} bytes and values {@link #valueBytes()} bytes; both
 * are checked here, because the kernel reads exactly that many bytes from whatever we pass. For per-CPU
 * maps a value is one slot per possible CPU, each rounded up to 8 bytes.
 *
 * <p><b>Batches.</b> {@link #updateBatch} and {@link #deleteBatch} use bpf_map_*_batch where the kernel
 * offers it for this map, else one call per element, with the same outcome either way: elements apply
 * in list order and the first failure stops the batch ({@link BpfBatchException} says how many landed
 * and which key failed). Whether batches work is asked once per map and operation, with an empty batch:
 * a kernel without the command answers EINVAL, a map type without the operation ENOTSUPP (or
 * EOPNOTSUPP), and a real element error can then never be mistaken for "no batches".
 *
 * <p>Thread-safe: every operation is one or more bpf() calls; the kernel orders them.
 */
public final class BpfMap implements MapIo, AutoCloseable {
    public static final int TYPE_HASH = 1;
    public static final int TYPE_ARRAY = 2;
    public static final int TYPE_PERCPU_HASH = 5;
    public static final int TYPE_PERCPU_ARRAY = 6;
    public static final int TYPE_LRU_HASH = 9;
    public static final int TYPE_LRU_PERCPU_HASH = 10;
    public static final int TYPE_LPM_TRIE = 11;
    private static final int TYPE_PERCPU_CGROUP_STORAGE = 21;

    /** BPF_F_NO_PREALLOC: required by LPM tries, saves memory for sparse hash maps. */
    public static final int F_NO_PREALLOC = 1;

    private static final long BPF_ANY = 0;
    /** Elements per bpf() batch call: bounds the native copy, not the batch (the kernel has no limit). */
    static final int BATCH_CHUNK = 4096;

    private final String name;
    private final int id;
    private final int type;
    private final int keySize;
    private final int valueSize;
    private final int maxEntries;
    private final int flags;
    private final int valueBytes;
    private volatile int fd;
    /** null until the first batch asks; then whether the kernel does this operation in batches for this map. */
    private volatile Boolean updateBatches;
    private volatile Boolean deleteBatches;

    private BpfMap(int fd, String name, byte[] info) {
        ByteBuffer b = Layouts.view(info);
        this.fd = fd;
        this.type = b.getInt(Layouts.MAP_INFO_TYPE);
        this.id = b.getInt(Layouts.MAP_INFO_ID);
        this.keySize = b.getInt(Layouts.MAP_INFO_KEY_SIZE);
        this.valueSize = b.getInt(Layouts.MAP_INFO_VALUE_SIZE);
        this.maxEntries = b.getInt(Layouts.MAP_INFO_MAX_ENTRIES);
        this.flags = b.getInt(Layouts.MAP_INFO_MAP_FLAGS);
        this.name = name != null ? name : Layouts.name(info, Layouts.MAP_INFO_NAME, Layouts.OBJ_NAME_LEN);
        this.valueBytes = perCpu(type) ? possibleCpus() * roundUp8(valueSize) : valueSize;
    }

    /**
     * Wraps a descriptor this handle will own, reading the map's facts from the kernel. {@code name} is
     * libbpf's full name where known; the kernel keeps only 15 characters.
     */
    static BpfMap adopt(int fd, String name, String object) {
        return new BpfMap(fd, name, FdKind.info(fd, FdKind.MAP, Layouts.MAP_INFO_SIZE, object));
    }

    /** Opens a map pinned on bpffs (another process's, or ours from before a restart). */
    public static BpfMap openPinned(Path path) {
        int fd = LibBpfNative.check(LibBpfNative.lib().bpf_obj_get(path.toString()), "bpf_obj_get", path.toString());
        return adopt(fd, null, path.toString());
    }

    /**
     * Creates an unpinned map outside any object: for probes and tests. It lives until the handle is
     * closed. {@code name} is at most 15 characters of [A-Za-z0-9_.].
     */
    public static BpfMap create(int type, String name, int keySize, int valueSize, int maxEntries, int mapFlags) {
        Pointer opts = Layouts.struct(Layouts.MAP_CREATE_OPTS_SIZE);
        opts.putLong(0, Layouts.MAP_CREATE_OPTS_SIZE);
        opts.putInt(Layouts.MAP_CREATE_OPTS_MAP_FLAGS, mapFlags);
        int fd = LibBpfNative.check(LibBpfNative.lib().bpf_map_create(type, name, keySize, valueSize, maxEntries, opts),
                "bpf_map_create", name);
        return adopt(fd, name, name);
    }

    /** Pins the map at {@code path} on bpffs, so it outlives every descriptor (as an older agent's maps do). */
    public void pin(Path path) {
        LibBpfNative.check(LibBpfNative.lib().bpf_obj_pin(fd, path.toString()), "bpf_obj_pin", name + " at " + path);
    }

    /** libbpf_num_possible_cpus(): the number of slots of a per-CPU value (not the online CPUs). */
    public static int possibleCpus() {
        return LibBpfNative.check(LibBpfNative.lib().libbpf_num_possible_cpus(), "libbpf_num_possible_cpus", "cpus");
    }

    public String name() {
        return name;
    }

    /** The descriptor, -1 after {@link #close()}. */
    public int fd() {
        return fd;
    }

    /** The kernel's id: equal for two handles of the same map, e.g. before and after a restart. */
    public int id() {
        return id;
    }

    /** BPF_MAP_TYPE_*, see the TYPE_ constants. */
    public int type() {
        return type;
    }

    public int keySize() {
        return keySize;
    }

    /** The value size the map was declared with; per CPU, for per-CPU maps. */
    public int valueSize() {
        return valueSize;
    }

    /** Bytes of a value as user space reads and writes it: possible CPUs × round_up(valueSize, 8) for per-CPU maps. */
    public int valueBytes() {
        return valueBytes;
    }

    public int maxEntries() {
        return maxEntries;
    }

    /** BPF_F_* map flags. */
    public int flags() {
        return flags;
    }

    public boolean perCpu() {
        return perCpu(type);
    }

    /** Creates or replaces one element (BPF_ANY). */
    public void update(byte[] key, byte[] value) {
        checkKey(key);
        checkValue(value);
        LibBpfNative.check(LibBpfNative.lib().bpf_map_update_elem(fd, key, value, BPF_ANY), "bpf_map_update_elem", name);
    }

    /** Deletes one element; false if there was none. */
    public boolean delete(byte[] key) {
        checkKey(key);
        int ret = LibBpfNative.lib().bpf_map_delete_elem(fd, key);
        if (ret == -Errno.ENOENT) {
            return false;
        }
        LibBpfNative.check(ret, "bpf_map_delete_elem", name);
        return true;
    }

    /** The value, or null if there is none. On an LPM trie the key is looked up by longest prefix. */
    public byte[] lookup(byte[] key) {
        checkKey(key);
        byte[] value = new byte[valueBytes];
        int ret = LibBpfNative.lib().bpf_map_lookup_elem(fd, key, value);
        if (ret == -Errno.ENOENT) {
            return null;
        }
        LibBpfNative.check(ret, "bpf_map_lookup_elem", name);
        return value;
    }

    /**
     * The key after {@code key} in the kernel's order, the first key for null, null after the last.
     * A key that is not (or no longer) in a hash map or trie restarts at the first key, as the kernel does.
     */
    public byte[] nextKey(byte[] key) {
        if (key != null) {
            checkKey(key);
        }
        byte[] next = new byte[keySize];
        int ret = LibBpfNative.lib().bpf_map_get_next_key(fd, key, next);
        if (ret == -Errno.ENOENT) {
            return null;
        }
        LibBpfNative.check(ret, "bpf_map_get_next_key", name);
        return next;
    }

    /**
     * Every element as {key, value}, walked with {@link #nextKey}. Under concurrent change every key
     * present throughout the walk is returned exactly once; keys added or removed meanwhile may or may
     * not be. A key deleted under the walk makes the kernel restart it from the first key, so keys
     * already seen are skipped, and a walk that keeps restarting (heavy churn) gives up with ConcurrentModification.
     */
    public List<byte[][]> entries() {
        List<byte[][]> out = new ArrayList<>();
        Set<ByteBuffer> seen = new HashSet<>();
        long budget = 4L * maxEntries + 16;
        for (byte[] key = nextKey(null); key != null; key = nextKey(key)) {
            if (--budget < 0) {
                throw new ConcurrentModificationException(name + " kept changing while it was read");
            }
            if (!seen.add(ByteBuffer.wrap(key))) {
                continue;
            }
            byte[] value = lookup(key);
            if (value != null) {
                out.add(new byte[][] {key, value});
            }
        }
        return out;
    }

    /**
     * Creates or replaces every element (BPF_ANY), in order. Returns how many were applied: all of
     * them, or it throws {@link BpfBatchException} naming the first that failed (e.g. E2BIG when the map
     * is full) and how many before it landed; nothing after it is applied.
     */
    public int updateBatch(List<byte[]> keys, List<byte[]> values) {
        if (keys.size() != values.size()) {
            throw new IllegalArgumentException(name + ": " + keys.size() + " keys but " + values.size() + " values");
        }
        for (int i = 0; i < keys.size(); i++) {
            checkKey(keys.get(i));
            checkValue(values.get(i));
        }
        if (keys.isEmpty()) {
            return 0;
        }
        if (!updateBatches()) {
            for (int i = 0; i < keys.size(); i++) {
                int ret = LibBpfNative.lib().bpf_map_update_elem(fd, keys.get(i), values.get(i), BPF_ANY);
                if (ret < 0) {
                    throw batchFailure("bpf_map_update_elem", -ret, i, keys);
                }
            }
            return keys.size();
        }
        Pointer opts = batchOpts();
        for (int start = 0; start < keys.size(); start += BATCH_CHUNK) {
            int end = Math.min(keys.size(), start + BATCH_CHUNK);
            IntByReference count = new IntByReference(end - start);
            int ret = LibBpfNative.lib().bpf_map_update_batch(fd, concat(keys, start, end), concat(values, start, end), count, opts);
            if (ret < 0) {
                throw partial("bpf_map_update_batch", -ret, start, count.getValue(), keys);
            }
        }
        return keys.size();
    }

    /**
     * Deletes every key, in order; a key that is not there is skipped, not an error (deleting is
     * idempotent). Returns how many elements were actually deleted. The first other failure stops the
     * batch with {@link BpfBatchException}, as in {@link #updateBatch}.
     */
    public int deleteBatch(List<byte[]> keys) {
        for (byte[] key : keys) {
            checkKey(key);
        }
        if (keys.isEmpty()) {
            return 0;
        }
        int deleted = 0;
        if (!deleteBatches()) {
            for (int i = 0; i < keys.size(); i++) {
                int ret = LibBpfNative.lib().bpf_map_delete_elem(fd, keys.get(i));
                if (ret == 0) {
                    deleted++;
                } else if (ret != -Errno.ENOENT) {
                    throw batchFailure("bpf_map_delete_elem", -ret, i, keys);
                }
            }
            return deleted;
        }
        Pointer opts = batchOpts();
        int start = 0;
        while (start < keys.size()) {
            int end = Math.min(keys.size(), start + BATCH_CHUNK);
            IntByReference count = new IntByReference(end - start);
            int ret = LibBpfNative.lib().bpf_map_delete_batch(fd, concat(keys, start, end), count, opts);
            if (ret == 0) {
                deleted += end - start;
                start = end;
            } else if (ret == -Errno.ENOENT) {
                // The kernel stops at a missing key and reports how many it deleted before it: skip that
                // one key and go on with the rest. Many missing keys cost one call each.
                deleted += count.getValue();
                start += count.getValue() + 1;
            } else {
                throw partial("bpf_map_delete_batch", -ret, start, count.getValue(), keys);
            }
        }
        return deleted;
    }

    /** Whether updates of this map go to the kernel in batches (asked once). */
    boolean updateBatches() {
        Boolean known = updateBatches;
        if (known == null) {
            known = probeBatch(true);
            updateBatches = known;
        }
        return known;
    }

    boolean deleteBatches() {
        Boolean known = deleteBatches;
        if (known == null) {
            known = probeBatch(false);
            deleteBatches = known;
        }
        return known;
    }

    /** For tests: take the per-element path on a kernel that has batches, to prove both agree. */
    void disableBatches() {
        updateBatches = false;
        deleteBatches = false;
    }

    /**
     * An empty batch: the kernel checks the command, the map and its operation, and returns before
     * touching any element. Any answer other than "yes" or "not supported" (EBADF, EPERM) is a real
     * failure and is thrown.
     */
    private boolean probeBatch(boolean update) {
        IntByReference zero = new IntByReference(0);
        int ret = update
                ? LibBpfNative.lib().bpf_map_update_batch(fd, null, null, zero, batchOpts())
                : LibBpfNative.lib().bpf_map_delete_batch(fd, null, zero, batchOpts());
        if (ret == 0) {
            return true;
        }
        if (ret == -Errno.EINVAL || ret == -Errno.ENOTSUPP || ret == -Errno.EOPNOTSUPP) {
            return false;
        }
        throw LibBpfNative.error(update ? "bpf_map_update_batch" : "bpf_map_delete_batch", name, -ret);
    }

    /** BPF_ANY for every element, no batch flags. */
    private static Pointer batchOpts() {
        Pointer opts = Layouts.struct(Layouts.BATCH_OPTS_SIZE);
        opts.putLong(0, Layouts.BATCH_OPTS_SIZE);
        opts.putLong(Layouts.BATCH_OPTS_ELEM_FLAGS, BPF_ANY);
        opts.putLong(Layouts.BATCH_OPTS_FLAGS, 0);
        return opts;
    }

    /**
     * A batch call failed after {@code done} elements of the chunk starting at {@code start}. EFAULT is
     * the one error after which the kernel's count cannot be trusted; it only comes from bad pointers,
     * i.e. a bug here, so it is reported without claiming a count.
     */
    private BpfException partial(String operation, int errno, int start, int done, List<byte[]> keys) {
        if (errno == Errno.EFAULT) {
            return LibBpfNative.error(operation, name, errno);
        }
        return batchFailure(operation, errno, start + done, keys);
    }

    private BpfBatchException batchFailure(String operation, int errno, int index, List<byte[]> keys) {
        return new BpfBatchException(operation, name, errno, LibBpfNative.strerror(errno), index, keys.size(), keys.get(index));
    }

    private static byte[] concat(List<byte[]> parts, int start, int end) {
        int size = 0;
        for (int i = start; i < end; i++) {
            size += parts.get(i).length;
        }
        byte[] out = new byte[size];
        int at = 0;
        for (int i = start; i < end; i++) {
            byte[] p = parts.get(i);
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }

    private void checkKey(byte[] key) {
        if (key.length != keySize) {
            throw new IllegalArgumentException(name + ": key of " + key.length + " bytes, the map's keys have " + keySize);
        }
    }

    private void checkValue(byte[] value) {
        if (value.length != valueBytes) {
            throw new IllegalArgumentException(name + ": value of " + value.length + " bytes, the map's values have "
                    + valueBytes + (perCpu() ? " (" + possibleCpus() + " possible CPUs × " + roundUp8(valueSize) + ")" : ""));
        }
    }

    private static boolean perCpu(int type) {
        return type == TYPE_PERCPU_HASH || type == TYPE_PERCPU_ARRAY || type == TYPE_LRU_PERCPU_HASH
                || type == TYPE_PERCPU_CGROUP_STORAGE;
    }

    private static int roundUp8(int n) {
        return (n + 7) & ~7;
    }

    /** Closes this handle's descriptor; the map lives on while pinned or used. Idempotent. */
    @Override
    public synchronized void close() {
        int old = fd;
        fd = -1;
        LibC.closeQuietly(old);
    }

    @Override
    public String toString() {
        return name + " (id " + id + ", type " + type + ", key " + keySize + " B, value " + valueSize + " B, max " + maxEntries + ")";
    }
}
