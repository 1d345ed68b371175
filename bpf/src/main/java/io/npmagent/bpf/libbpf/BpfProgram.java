package io.npmagent.bpf.libbpf;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import jnr.ffi.Pointer;

/**
 * One loaded BPF program, by file descriptor: what {@link Tc} attaches, and what tests run on crafted
 * packets with {@link #testRun} (BPF_PROG_TEST_RUN: the real program, the real maps, no interface).
 *
 * <p>A handle owns its descriptor, a duplicate of libbpf's, so it stays usable after its
 * {@link BpfObject} is closed. Attaching takes the kernel's own reference: closing every handle leaves
 * an attached program running.
 */
public final class BpfProgram implements AutoCloseable {
    /** BPF_PROG_TYPE_SCHED_CLS: tc classifiers, our programs' type. */
    public static final int TYPE_SCHED_CLS = 3;

    /**
     * Room beyond the input packet for the output packet: a tc program may push headers. A program that
     * grows the packet by more makes the run fail with ENOSPC, since the kernel will not truncate silently.
     */
    static final int DATA_OUT_HEADROOM = 512;
    /** Capacity for the context the kernel copies back; more than any kernel's struct __sk_buff so far. */
    static final int CTX_OUT_CAPACITY = 512;

    /**
     * The outcome of one test run: the program's return code (for tc, TC_ACT_OK 0, TC_ACT_SHOT 2...), the
     * packet as the program left it, the context as it left it (struct __sk_buff for tc) and the mean
     * duration of one repetition.
     */
    public record TestRun(int retval, byte[] data, byte[] ctx, int durationNanos) {}

    private final String name;
    private final int id;
    private final int type;
    private volatile int fd;
    private Path pinnedAt;

    private BpfProgram(int fd, String name, byte[] info) {
        ByteBuffer b = Layouts.view(info);
        this.fd = fd;
        this.type = b.getInt(Layouts.PROG_INFO_TYPE);
        this.id = b.getInt(Layouts.PROG_INFO_ID);
        this.name = name != null ? name : Layouts.name(info, Layouts.PROG_INFO_NAME, Layouts.OBJ_NAME_LEN);
    }

    /** Wraps a descriptor this handle will own. */
    static BpfProgram adopt(int fd, String name, String object) {
        return new BpfProgram(fd, name, FdKind.info(fd, FdKind.PROG, Layouts.PROG_INFO_SIZE, object));
    }

    /** Opens a program pinned on bpffs. */
    public static BpfProgram openPinned(Path path) {
        int fd = LibBpfNative.check(LibBpfNative.lib().bpf_obj_get(path.toString()), "bpf_obj_get", path.toString());
        return adopt(fd, null, path.toString());
    }

    /** The 192 bytes of a struct __sk_buff with only {@code ifindex} set: the context of a tc test run on that interface. */
    public static byte[] skbContext(int ifindex) {
        return skbContext(ifindex, 0);
    }

    /** As {@link #skbContext(int)}, with the packet's timestamp ({@code skb->tstamp}, CLOCK_MONOTONIC nanoseconds) set. */
    public static byte[] skbContext(int ifindex, long tstampNanos) {
        byte[] ctx = new byte[Layouts.SK_BUFF_SIZE];
        Layouts.view(ctx).putInt(Layouts.SK_BUFF_IFINDEX, ifindex).putLong(Layouts.SK_BUFF_TSTAMP, tstampNanos);
        return ctx;
    }

    public String name() {
        return name;
    }

    /** The descriptor, -1 after {@link #close()}. */
    public int fd() {
        return fd;
    }

    /** The kernel's id, as tc reports the program attached to a hook. */
    public int id() {
        return id;
    }

    /** BPF_PROG_TYPE_*. */
    public int type() {
        return type;
    }

    /** Pins the program at {@code path} on bpffs, so it outlives every descriptor. */
    public synchronized void pin(Path path) {
        LibBpfNative.check(LibBpfNative.lib().bpf_obj_pin(fd, path.toString()), "bpf_obj_pin", name + " at " + path);
        pinnedAt = path;
    }

    /** Removes the pin this handle made; false if it made none or the pin is already gone. */
    public synchronized boolean unpin() {
        if (pinnedAt == null) {
            return false;
        }
        try {
            return Files.deleteIfExists(pinnedAt);
        } catch (IOException e) {
            throw new UncheckedIOException("unpin " + name + " at " + pinnedAt, e);
        } finally {
            pinnedAt = null;
        }
    }

    /**
     * Runs the program on {@code packet} (from the Ethernet header on, for tc) {@code repeat} times
     * (0 counts as 1) with BPF_PROG_TEST_RUN. {@code ctxIn} is a struct __sk_buff (see
     * {@link #skbContext}) or null; its ifindex must name an interface in the calling thread's network
     * namespace, which is why kernel tests run this inside a {@link NetnsThread}. The kernel rejects
     * context fields it does not let callers set (EINVAL).
     */
    public TestRun testRun(byte[] packet, byte[] ctxIn, int repeat) {
        Pointer dataIn = Layouts.copy(packet);
        int dataCapacity = packet.length + DATA_OUT_HEADROOM;
        Pointer dataOut = Layouts.struct(dataCapacity);
        Pointer ctxInMem = ctxIn == null ? null : Layouts.copy(ctxIn);
        Pointer ctxOut = Layouts.struct(CTX_OUT_CAPACITY);

        Pointer opts = Layouts.struct(Layouts.TEST_RUN_OPTS_SIZE);
        opts.putLong(0, Layouts.TEST_RUN_OPTS_SIZE);
        opts.putAddress(Layouts.TEST_RUN_DATA_IN, dataIn.address());
        opts.putInt(Layouts.TEST_RUN_DATA_SIZE_IN, packet.length);
        opts.putAddress(Layouts.TEST_RUN_DATA_OUT, dataOut.address());
        opts.putInt(Layouts.TEST_RUN_DATA_SIZE_OUT, dataCapacity);
        if (ctxInMem != null) {
            opts.putAddress(Layouts.TEST_RUN_CTX_IN, ctxInMem.address());
            opts.putInt(Layouts.TEST_RUN_CTX_SIZE_IN, ctxIn.length);
        }
        opts.putAddress(Layouts.TEST_RUN_CTX_OUT, ctxOut.address());
        opts.putInt(Layouts.TEST_RUN_CTX_SIZE_OUT, CTX_OUT_CAPACITY);
        opts.putInt(Layouts.TEST_RUN_REPEAT, repeat);

        LibBpfNative.check(LibBpfNative.lib().bpf_prog_test_run_opts(fd, opts), "bpf_prog_test_run_opts", name);

        byte[] data = new byte[Math.min(dataCapacity, opts.getInt(Layouts.TEST_RUN_DATA_SIZE_OUT))];
        dataOut.get(0, data, 0, data.length);
        byte[] ctx = new byte[Math.min(CTX_OUT_CAPACITY, opts.getInt(Layouts.TEST_RUN_CTX_SIZE_OUT))];
        ctxOut.get(0, ctx, 0, ctx.length);
        // The opts struct holds only the addresses: the buffers must live until the call has returned.
        Reference.reachabilityFence(dataIn);
        Reference.reachabilityFence(ctxInMem);
        return new TestRun(opts.getInt(Layouts.TEST_RUN_RETVAL), data, ctx, opts.getInt(Layouts.TEST_RUN_DURATION));
    }

    /** Closes this handle's descriptor; an attached or pinned program stays loaded. Idempotent. */
    @Override
    public synchronized void close() {
        int old = fd;
        fd = -1;
        LibC.closeQuietly(old);
    }

    @Override
    public String toString() {
        return name + " (id " + id + ", type " + type + ")";
    }
}
