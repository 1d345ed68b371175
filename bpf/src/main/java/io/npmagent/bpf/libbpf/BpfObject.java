package io.npmagent.bpf.libbpf;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.ref.Reference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import jnr.ffi.Pointer;

/**
 * One compiled BPF ELF object (e.g. {@code tc_pod.o}) opened and loaded through libbpf: its maps are
 * created (or adopted) and its programs verified and loaded.
 *
 * <p><b>Pinning is how a restart adopts kernel state.</b> Maps declared {@code LIBBPF_PIN_BY_NAME} are
 * pinned at {@code <pinRoot>/<map name>} on load. When a pin already exists, libbpf reuses that map
 * instead of creating one (after checking type, sizes and flags match, else the load fails with
 * EINVAL), so a restarted agent loads fresh programs that read the very maps its predecessor wrote, and
 * enforcement never starts from empty. With a null pin root nothing is pinned or reused: every load
 * gets fresh maps, which is what program tests want.
 *
 * <p><b>Lifetime.</b> {@link #map} and {@link #program} hand out handles with their own descriptors,
 * so the object can be closed after attaching: closing frees libbpf's copy of the ELF, BTF and
 * relocations, while pinned maps, attached programs and open handles stay.
 *
 * <p>Not meant to be shared between threads while loading; every method is synchronized so a stray
 * concurrent call cannot corrupt libbpf's state.
 */
public final class BpfObject implements AutoCloseable {
    private final String name;
    private final Path pinRoot;
    /**
     * Where the kernel writes the verifier's log when a program fails to load (libbpf retries a failed
     * load with logging on). With a buffer of ours libbpf does not print the log itself, so it can go
     * into the exception, where an operator looks. Kernels since 6.4 keep the log's tail when it does
     * not fit, which is where the verifier says what it refused.
     */
    static final int LOG_SIZE = 1 << 20;
    /** How much of the log's tail an exception carries. */
    static final int LOG_TAIL = 4000;

    /** libbpf keeps a pointer into the ELF buffer it was opened from, so the buffer lives as long as the object. */
    private Pointer elf;
    /** The kernel log buffer libbpf was given: lives as long as the object, like the ELF. */
    private Pointer log;
    private Pointer obj;
    private boolean loaded;

    private BpfObject(String name, Path pinRoot, Pointer elf, Pointer log, Pointer obj) {
        this.name = name;
        this.pinRoot = pinRoot;
        this.elf = elf;
        this.log = log;
        this.obj = obj;
    }

    /** The bytes of {@code io/npmagent/bpf/<name>} on the class path, where the build puts every compiled program. */
    public static byte[] resource(String name) {
        String path = "/io/npmagent/bpf/" + name;
        try (InputStream in = BpfObject.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalArgumentException("no resource " + path + " on the class path (the build compiles src/main/c into it)");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + path, e);
        }
    }

    /**
     * Parses {@code elf} (bpf_object__open_mem); nothing reaches the kernel before {@link #load()}.
     * {@code objectName} names the object in libbpf's messages and prefixes its internal maps
     * ({@code .rodata}). {@code pinRoot} must be a directory on a bpffs mount, or null for no pinning.
     */
    public static BpfObject open(byte[] elf, String objectName, Path pinRoot) {
        Objects.requireNonNull(objectName, "objectName");
        if (pinRoot != null && !LibC.isBpffs(pinRoot)) {
            // libbpf would only find out at load, in a warning on stderr and a bare EINVAL.
            throw new BpfException("bpf_object__open_mem", objectName, Errno.EINVAL,
                    "pin root " + pinRoot + " is not a directory on a bpffs mount");
        }
        Pointer buffer = Layouts.copy(elf);
        Pointer nameMem = Layouts.cString(objectName);
        Pointer rootMem = pinRoot == null ? null : Layouts.cString(pinRoot.toString());
        Pointer log = Layouts.struct(LOG_SIZE);
        Pointer opts = Layouts.struct(Layouts.OPEN_OPTS_SIZE);
        opts.putLong(0, Layouts.OPEN_OPTS_SIZE);
        opts.putAddress(Layouts.OPEN_OPTS_OBJECT_NAME, nameMem.address());
        if (rootMem != null) {
            opts.putAddress(Layouts.OPEN_OPTS_PIN_ROOT_PATH, rootMem.address());
        }
        opts.putAddress(Layouts.OPEN_OPTS_KERNEL_LOG_BUF, log.address());
        opts.putLong(Layouts.OPEN_OPTS_KERNEL_LOG_SIZE, LOG_SIZE);
        Pointer obj = LibBpfNative.lib().bpf_object__open_mem(buffer, elf.length, opts);
        if (obj == null) {
            throw LibBpfNative.error("bpf_object__open_mem", objectName, LibBpfNative.lastErrno());
        }
        // libbpf copies both strings during open.
        Reference.reachabilityFence(nameMem);
        Reference.reachabilityFence(rootMem);
        BpfObject object = new BpfObject(objectName, pinRoot, buffer, log, obj);
        if (pinRoot == null) {
            object.clearPinPaths();
        }
        return object;
    }

    /** Without a pin root libbpf would pin under /sys/fs/bpf; clearing every map's pin path turns pinning off. */
    private void clearPinPaths() {
        for (Pointer m = LibBpfNative.lib().bpf_object__next_map(obj, null); m != null;
                m = LibBpfNative.lib().bpf_object__next_map(obj, m)) {
            LibBpfNative.check(LibBpfNative.lib().bpf_map__set_pin_path(m, null), "bpf_map__set_pin_path",
                    LibBpfNative.lib().bpf_map__name(m));
        }
    }

    /**
     * Creates or adopts the maps and loads every program through the verifier. On failure the exception
     * carries the tail of the verifier's log, libbpf has unpinned the maps this load pinned (never
     * adopted ones), and the object can only be closed.
     */
    public synchronized void load() {
        requireOpen();
        if (loaded) {
            throw new IllegalStateException(name + " is already loaded");
        }
        int ret = LibBpfNative.lib().bpf_object__load(obj);
        if (ret < 0) {
            String kernelLog = log.getString(0, LOG_SIZE, StandardCharsets.UTF_8).strip();
            if (kernelLog.length() > LOG_TAIL) {
                kernelLog = "..." + kernelLog.substring(kernelLog.length() - LOG_TAIL);
            }
            throw new BpfException("bpf_object__load", name, -ret, LibBpfNative.strerror(-ret),
                    kernelLog.isEmpty() ? "" : "; kernel log:\n" + kernelLog);
        }
        loaded = true;
    }

    /**
     * Before {@link #load()}: gives program {@code programName} its type and expected attach type (for a
     * section libbpf 1.1 does not know, such as {@code netfilter}), or, with {@code load} false, leaves it
     * out of the load (on a kernel that cannot run it).
     */
    public synchronized void prepareProgram(String programName, boolean load, int type, int expectedAttachType) {
        requireOpen();
        if (loaded) {
            throw new IllegalStateException(name + " is already loaded");
        }
        Pointer p = LibBpfNative.lib().bpf_object__find_program_by_name(obj, programName);
        if (p == null) {
            throw new BpfException("bpf_object__find_program_by_name", programName, Errno.ENOENT, "no program of that name in " + name);
        }
        LibBpfNative.check(LibBpfNative.lib().bpf_program__set_autoload(p, load), "bpf_program__set_autoload", programName);
        if (load) {
            LibBpfNative.check(LibBpfNative.lib().bpf_program__set_type(p, type), "bpf_program__set_type", programName);
            LibBpfNative.check(LibBpfNative.lib().bpf_program__set_expected_attach_type(p, expectedAttachType),
                    "bpf_program__set_expected_attach_type", programName);
        }
    }

    /** A map as the object declares it: what a pinned map must match for libbpf to adopt it. */
    public record MapSpec(String name, int type, int keySize, int valueSize, int maxEntries) {
        /** Whether {@code pinned} has this declaration's type, sizes and capacity. */
        public boolean matches(BpfMap pinned) {
            return pinned.type() == type && pinned.keySize() == keySize && pinned.valueSize() == valueSize
                    && pinned.maxEntries() == maxEntries;
        }

        @Override
        public String toString() {
            return name + " (type " + type + ", key " + keySize + " B, value " + valueSize + " B, max " + maxEntries + ")";
        }
    }

    /** Every map the object declares, before {@link #load()} (libbpf has read them from the ELF). */
    public synchronized List<MapSpec> mapSpecs() {
        requireOpen();
        List<MapSpec> out = new ArrayList<>();
        LibBpfNative.Api lib = LibBpfNative.lib();
        for (Pointer m = lib.bpf_object__next_map(obj, null); m != null; m = lib.bpf_object__next_map(obj, m)) {
            out.add(new MapSpec(lib.bpf_map__name(m), lib.bpf_map__type(m), lib.bpf_map__key_size(m), lib.bpf_map__value_size(m),
                    lib.bpf_map__max_entries(m)));
        }
        return out;
    }

    /** A new handle on the map {@code name}; the caller closes it. */
    public synchronized BpfMap map(String mapName) {
        requireLoaded();
        Pointer m = LibBpfNative.lib().bpf_object__find_map_by_name(obj, mapName);
        if (m == null) {
            throw new BpfException("bpf_object__find_map_by_name", mapName, Errno.ENOENT,
                    "no map of that name in " + name + " (it has " + mapNames() + ")");
        }
        int fd = LibBpfNative.check(LibBpfNative.lib().bpf_map__fd(m), "bpf_map__fd", mapName);
        return BpfMap.adopt(LibC.dup(fd, mapName), mapName, mapName);
    }

    /** A new handle on the program {@code name} (its C function name); the caller closes it. */
    public synchronized BpfProgram program(String programName) {
        requireLoaded();
        Pointer p = LibBpfNative.lib().bpf_object__find_program_by_name(obj, programName);
        if (p == null) {
            throw new BpfException("bpf_object__find_program_by_name", programName, Errno.ENOENT,
                    "no program of that name in " + name + " (it has " + programNames() + ")");
        }
        int fd = LibBpfNative.check(LibBpfNative.lib().bpf_program__fd(p), "bpf_program__fd", programName);
        return BpfProgram.adopt(LibC.dup(fd, programName), programName, programName);
    }

    /** Every map's name, including libbpf's internal ones (e.g. {@code tc_pod.rodata}). */
    public synchronized List<String> mapNames() {
        requireOpen();
        List<String> names = new ArrayList<>();
        for (Pointer m = LibBpfNative.lib().bpf_object__next_map(obj, null); m != null;
                m = LibBpfNative.lib().bpf_object__next_map(obj, m)) {
            names.add(LibBpfNative.lib().bpf_map__name(m));
        }
        return names;
    }

    public synchronized List<String> programNames() {
        requireOpen();
        List<String> names = new ArrayList<>();
        for (Pointer p = LibBpfNative.lib().bpf_object__next_program(obj, null); p != null;
                p = LibBpfNative.lib().bpf_object__next_program(obj, p)) {
            names.add(LibBpfNative.lib().bpf_program__name(p));
        }
        return names;
    }

    public String name() {
        return name;
    }

    /** Where pinned maps live, or null when this object pins nothing. */
    public Path pinRoot() {
        return pinRoot;
    }

    private void requireOpen() {
        if (obj == null) {
            throw new IllegalStateException(name + " is closed");
        }
    }

    private void requireLoaded() {
        requireOpen();
        if (!loaded) {
            throw new IllegalStateException(name + " is not loaded: call load() first");
        }
    }

    /** bpf_object__close: frees libbpf's state and its descriptors. Pins, attachments and handles survive. Idempotent. */
    @Override
    public synchronized void close() {
        if (obj != null) {
            LibBpfNative.lib().bpf_object__close(obj);
            obj = null;
            elf = null;
            log = null;
        }
    }

    @Override
    public String toString() {
        return name + (pinRoot == null ? " (unpinned)" : " (pinned at " + pinRoot + ")");
    }
}
