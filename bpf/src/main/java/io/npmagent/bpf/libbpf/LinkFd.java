package io.npmagent.bpf.libbpf;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;

/**
 * What every kind of BPF link here shares: its descriptor, opening one pinned on bpffs (refusing a map
 * or program pinned there), reading its {@code struct bpf_link_info}, pinning it, and closing this
 * descriptor (the link lives on while pinned).
 */
abstract class LinkFd implements AutoCloseable {
    static final int INFO_SIZE = 64;

    final String name;
    volatile int fd;

    LinkFd(int fd, String name) {
        this.fd = fd;
        this.name = name;
    }

    /** A descriptor of the link pinned at {@code path}. */
    static int openPinnedFd(Path path) {
        int fd = LibBpfNative.check(LibBpfNative.lib().bpf_obj_get(path.toString()), "bpf_obj_get", path.toString());
        FdKind.info(fd, FdKind.LINK, INFO_SIZE, path.toString());
        return fd;
    }

    /** {@code struct bpf_link_info}, native order: type, id, prog_id, then the kind's member of the union at 16. */
    ByteBuffer rawInfo() {
        byte[] raw = new byte[INFO_SIZE];
        jnr.ffi.byref.IntByReference len = new jnr.ffi.byref.IntByReference(raw.length);
        LibBpfNative.check(LibBpfNative.lib().bpf_obj_get_info_by_fd(fd, raw, len), "bpf_obj_get_info_by_fd", name);
        return ByteBuffer.wrap(raw).order(ByteOrder.nativeOrder());
    }

    /** Pins the link at {@code path}, so it outlives every descriptor. */
    public void pin(Path path) {
        LibBpfNative.check(LibBpfNative.lib().bpf_obj_pin(fd, path.toString()), "bpf_obj_pin", name + " at " + path);
    }

    static ByteBuffer attr(int size) {
        return ByteBuffer.allocate(size).order(ByteOrder.nativeOrder());
    }

    /** Closes this descriptor; the link lives on while pinned. */
    @Override
    public synchronized void close() {
        LibC.closeQuietly(fd);
        fd = -1;
    }

    @Override
    public String toString() {
        return name;
    }
}
