package io.npmagent.bpf.libbpf;

import java.nio.charset.StandardCharsets;
import jnr.ffi.LastError;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.Out;
import jnr.ffi.annotations.SaveError;
import jnr.ffi.byref.IntByReference;
import jnr.ffi.types.size_t;

/**
 * The libbpf functions this package calls, and nothing else. Everything native about eBPF goes
 * through here, so a reader sees the whole surface in one place, and a test double of the binding
 * would replace one class.
 *
 * <p>Error model of libbpf 1.x (its "strict mode" is the only mode): functions returning {@code int}
 * return {@code -errno} and set errno as well; functions returning a pointer return NULL and set errno.
 * {@link #check} turns the first kind into {@link BpfException}s, {@link #lastErrno()} reads the second.
 *
 * <p>The library is loaded on first use, not at class load, so {@link Capabilities#probe()} can report a
 * host without libbpf instead of the agent dying in a static initialiser.
 */
final class LibBpfNative {
    private LibBpfNative() {}

    /**
     * The C signatures, one to one. Public only because jnr-ffi generates the implementation in its own
     * class loader; the enclosing class keeps it out of the package's API. Structs are raw memory laid
     * out by {@link Layouts}; keys, values and info buffers are Java arrays jnr copies in and out.
     */
    public interface Api {
        // Objects: open from memory, load, look up maps and programs, close.
        @SaveError
        Pointer bpf_object__open_mem(Pointer objBuf, @size_t long objBufSize, Pointer opts);

        int bpf_object__load(Pointer obj);

        void bpf_object__close(Pointer obj);

        @SaveError
        Pointer bpf_object__find_map_by_name(Pointer obj, String name);

        @SaveError
        Pointer bpf_object__find_program_by_name(Pointer obj, String name);

        Pointer bpf_object__next_map(Pointer obj, Pointer prev);

        Pointer bpf_object__next_program(Pointer obj, Pointer prev);

        int bpf_map__set_pin_path(Pointer map, String path);

        int bpf_map__fd(Pointer map);

        String bpf_map__name(Pointer map);

        int bpf_map__type(Pointer map);

        int bpf_map__key_size(Pointer map);

        int bpf_map__value_size(Pointer map);

        int bpf_map__max_entries(Pointer map);

        int bpf_program__fd(Pointer prog);

        int bpf_program__set_type(Pointer prog, int type);

        int bpf_program__set_expected_attach_type(Pointer prog, int type);

        int bpf_program__set_autoload(Pointer prog, boolean autoload);

        String bpf_program__name(Pointer prog);

        // Maps by fd: the thin syscall wrappers of bpf.h.
        int bpf_map_create(int mapType, String name, int keySize, int valueSize, int maxEntries, Pointer opts);

        int bpf_map_update_elem(int fd, @In byte[] key, @In byte[] value, long flags);

        int bpf_map_lookup_elem(int fd, @In byte[] key, @Out byte[] value);

        int bpf_map_delete_elem(int fd, @In byte[] key);

        int bpf_map_get_next_key(int fd, @In byte[] key, @Out byte[] nextKey);

        int bpf_map_update_batch(int fd, @In byte[] keys, @In byte[] values, IntByReference count, Pointer opts);

        int bpf_map_delete_batch(int fd, @In byte[] keys, IntByReference count, Pointer opts);

        int bpf_obj_pin(int fd, String path);

        int bpf_obj_get(String path);

        int bpf_obj_get_info_by_fd(int fd, @In @Out byte[] info, IntByReference infoLen);

        int bpf_prog_test_run_opts(int progFd, Pointer opts);

        // tc: netlink in the calling thread's network namespace.
        int bpf_tc_hook_create(Pointer hook);

        int bpf_tc_attach(Pointer hook, Pointer opts);

        int bpf_tc_detach(Pointer hook, Pointer opts);

        int bpf_tc_query(Pointer hook, Pointer opts);

        // Probes and facts.
        int libbpf_probe_bpf_prog_type(int progType, Pointer opts);

        int libbpf_probe_bpf_map_type(int mapType, Pointer opts);

        int libbpf_probe_bpf_helper(int progType, int helperId, Pointer opts);

        int libbpf_num_possible_cpus();

        int libbpf_major_version();

        int libbpf_minor_version();

        int libbpf_strerror(int err, @Out byte[] buf, @size_t long size);

        /** Returns the previous callback; see {@link LibBpfLog}. */
        Pointer libbpf_set_print(LibBpfLog.PrintFn fn);

        // Ring buffers (BPF_MAP_TYPE_RINGBUF), read by the caller's thread; see {@link RingBuffer}.
        @SaveError
        Pointer ring_buffer__new(int mapFd, RingBuffer.SampleFn sample, Pointer ctx, Pointer opts);

        int ring_buffer__consume(Pointer rb);

        void ring_buffer__free(Pointer rb);
    }

    /** Tried in order: the unversioned name a -dev package installs, then the runtime package's soname. */
    private static final String[] NAMES = {"bpf", "libbpf.so.1"};

    private static final class Holder {
        static final Object LOADED = load();
    }

    private static Object load() {
        StringBuilder why = new StringBuilder();
        for (String name : NAMES) {
            Api api;
            try {
                api = LibraryLoader.create(Api.class).failImmediately().load(name);
            } catch (LinkageError | RuntimeException e) {
                why.append(why.length() == 0 ? "" : "; ").append(name).append(": ").append(e.getMessage());
                continue;
            }
            try {
                LibBpfLog.install(api);
            } catch (LinkageError | RuntimeException e) {
                // libbpf keeps printing to stderr itself: less tidy, nothing lost.
            }
            return api;
        }
        return new BpfException("load libbpf", String.join(", ", NAMES), 0, "not found (" + why + ")");
    }

    /** The binding; throws the load failure (again, for every caller) when libbpf cannot be loaded. */
    static Api lib() {
        Object loaded = Holder.LOADED;
        if (loaded instanceof BpfException) {
            BpfException e = (BpfException) loaded;
            throw new BpfException(e.operation(), e.object(), e.errno(), e.errorText());
        }
        return (Api) loaded;
    }

    static Runtime runtime() {
        return Runtime.getRuntime(lib());
    }

    /** errno saved by the last {@link SaveError} call on this thread (pointer-returning functions). */
    static int lastErrno() {
        return LastError.getLastError(runtime());
    }

    /** Returns {@code ret} when it is not negative, else throws for {@code -ret}. */
    static int check(int ret, String operation, String object) {
        if (ret < 0) {
            throw error(operation, object, -ret);
        }
        return ret;
    }

    static BpfException error(String operation, String object, int errno) {
        return new BpfException(operation, object, errno, strerror(errno));
    }

    /**
     * libbpf's text for an error: strerror for errnos, its own words for libbpf's codes (4000 and up,
     * e.g. "Kernel verifier blocks program loading"). ENOTSUPP (524) is kernel-internal and unknown to
     * libc, yet batch and probe calls return it, so it gets words here.
     */
    static String strerror(int errno) {
        if (errno == Errno.ENOTSUPP) {
            return "Operation not supported by this kernel for this object";
        }
        try {
            byte[] buf = new byte[256];
            lib().libbpf_strerror(errno, buf, buf.length);
            int end = 0;
            while (end < buf.length && buf[end] != 0) {
                end++;
            }
            return new String(buf, 0, end, StandardCharsets.UTF_8);
        } catch (BpfException e) {
            return "errno " + errno;
        }
    }
}
