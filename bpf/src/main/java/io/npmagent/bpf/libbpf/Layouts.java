package io.npmagent.bpf.libbpf;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;

/**
 * Every C struct this package writes or reads, as byte offsets: libbpf's option structs, the kernel's
 * info structs, {@code struct statfs} and {@code struct __sk_buff}. Raw offsets rather than jnr
 * {@code Struct}s, so the layout is written down once, plainly, and one test ({@code LayoutTest})
 * compiles the same {@code offsetof()}s against the installed headers and compares.
 *
 * <p>Offsets are for LP64 Linux (x86_64, arm64): {@code size_t} and pointers are 8 bytes.
 *
 * <p>The {@code sz} of each libbpf opts struct is the size in libbpf 1.1's headers, the oldest libbpf we
 * support. libbpf accepts a smaller {@code sz} from older callers forever (it zero-extends), and
 * rejects a larger one whose extra bytes are not zero, so declaring 1.1's size works on 1.1 and on
 * every later libbpf.
 */
final class Layouts {
    private Layouts() {}

    // struct bpf_object_open_opts (libbpf.h)
    static final int OPEN_OPTS_SIZE = 80;
    static final int OPEN_OPTS_OBJECT_NAME = 8; // const char *
    static final int OPEN_OPTS_PIN_ROOT_PATH = 24; // const char *
    static final int OPEN_OPTS_KERNEL_LOG_BUF = 56; // char *
    static final int OPEN_OPTS_KERNEL_LOG_SIZE = 64; // size_t

    // struct bpf_map_create_opts (bpf.h)
    static final int MAP_CREATE_OPTS_SIZE = 48;
    static final int MAP_CREATE_OPTS_MAP_FLAGS = 28; // __u32

    // struct bpf_map_batch_opts (bpf.h)
    static final int BATCH_OPTS_SIZE = 24;
    static final int BATCH_OPTS_ELEM_FLAGS = 8; // __u64
    static final int BATCH_OPTS_FLAGS = 16; // __u64

    // struct bpf_test_run_opts (bpf.h)
    static final int TEST_RUN_OPTS_SIZE = 80;
    static final int TEST_RUN_DATA_IN = 8; // const void *
    static final int TEST_RUN_DATA_OUT = 16; // void *
    static final int TEST_RUN_DATA_SIZE_IN = 24; // __u32
    static final int TEST_RUN_DATA_SIZE_OUT = 28; // __u32, in: capacity, out: length
    static final int TEST_RUN_CTX_IN = 32; // const void *
    static final int TEST_RUN_CTX_OUT = 40; // void *
    static final int TEST_RUN_CTX_SIZE_IN = 48; // __u32
    static final int TEST_RUN_CTX_SIZE_OUT = 52; // __u32, in: capacity, out: length
    static final int TEST_RUN_RETVAL = 56; // __u32
    static final int TEST_RUN_REPEAT = 60; // int
    static final int TEST_RUN_DURATION = 64; // __u32, ns per repetition

    // struct bpf_tc_hook (libbpf.h)
    static final int TC_HOOK_SIZE = 24;
    static final int TC_HOOK_IFINDEX = 8; // int
    static final int TC_HOOK_ATTACH_POINT = 12; // enum bpf_tc_attach_point
    static final int TC_HOOK_PARENT = 16; // __u32

    // struct bpf_tc_opts (libbpf.h)
    static final int TC_OPTS_SIZE = 32;
    static final int TC_OPTS_PROG_FD = 8; // int
    static final int TC_OPTS_FLAGS = 12; // __u32
    static final int TC_OPTS_PROG_ID = 16; // __u32
    static final int TC_OPTS_HANDLE = 20; // __u32
    static final int TC_OPTS_PRIORITY = 24; // __u32

    // struct bpf_map_info (linux/bpf.h): we read up to the name; the kernel fills min(ours, its) bytes.
    static final int MAP_INFO_SIZE = 88;
    static final int MAP_INFO_TYPE = 0;
    static final int MAP_INFO_ID = 4;
    static final int MAP_INFO_KEY_SIZE = 8;
    static final int MAP_INFO_VALUE_SIZE = 12;
    static final int MAP_INFO_MAX_ENTRIES = 16;
    static final int MAP_INFO_MAP_FLAGS = 20;
    static final int MAP_INFO_NAME = 24; // char[16]

    // struct bpf_prog_info (linux/bpf.h): the buffer must be zero, as its pointer fields ask for dumps.
    static final int PROG_INFO_SIZE = 232;
    static final int PROG_INFO_TYPE = 0;
    static final int PROG_INFO_ID = 4;
    static final int PROG_INFO_NAME = 64; // char[16]

    /** BPF_OBJ_NAME_LEN: map and program names in info structs, truncated to 15 characters. */
    static final int OBJ_NAME_LEN = 16;

    // struct statfs (sys/statfs.h): f_type is the first word.
    static final int STATFS_SIZE = 120;
    static final int STATFS_F_TYPE = 0; // __fsword_t (long)

    // struct __sk_buff (linux/bpf.h), the context of a tc program's test run.
    static final int SK_BUFF_SIZE = 192;
    static final int SK_BUFF_IFINDEX = 40; // __u32
    static final int SK_BUFF_TSTAMP = 152; // __u64

    /** Zeroed native memory for a struct, freed when the returned pointer is collected. */
    static Pointer struct(int size) {
        return Memory.allocateDirect(LibBpfNative.runtime(), size, true);
    }

    /** A NUL-terminated UTF-8 copy of {@code s} in native memory; keep the pointer reachable while C uses it. */
    static Pointer cString(String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        Pointer p = Memory.allocateDirect(LibBpfNative.runtime(), bytes.length + 1, true);
        p.put(0, bytes, 0, bytes.length);
        return p;
    }

    /** A native copy of {@code bytes}; keep the pointer reachable while C uses it. */
    static Pointer copy(byte[] bytes) {
        Pointer p = Memory.allocateDirect(LibBpfNative.runtime(), Math.max(1, bytes.length), true);
        p.put(0, bytes, 0, bytes.length);
        return p;
    }

    /** Reads the structs the kernel fills into Java arrays, in the host's byte order. */
    static ByteBuffer view(byte[] struct) {
        return ByteBuffer.wrap(struct).order(ByteOrder.nativeOrder());
    }

    /** A NUL-terminated name field of at most {@code max} bytes. */
    static String name(byte[] struct, int offset, int max) {
        int end = offset;
        while (end < offset + max && struct[end] != 0) {
            end++;
        }
        return new String(struct, offset, end - offset, StandardCharsets.UTF_8);
    }
}
