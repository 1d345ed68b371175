package io.npmagent.bpf.libbpf;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import jnr.ffi.byref.IntByReference;

/**
 * What kind of BPF object a descriptor refers to, from its anonymous inode's name in /proc/self/fd
 * ({@code anon_inode:bpf-map}, {@code anon_inode:bpf-prog}). bpf_obj_get_info_by_fd fills whatever
 * struct matches the object and silently truncates it to our buffer, so a program pinned where a map
 * was expected would otherwise be read as a map with nonsense sizes.
 */
final class FdKind {
    private FdKind() {}

    static final String MAP = "bpf-map";
    static final String PROG = "bpf-prog";
    static final String LINK = "bpf-link";

    static void require(int fd, String kind, String object) {
        String actual;
        try {
            actual = Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd)).toString();
        } catch (IOException | UnsupportedOperationException e) {
            return; // no procfs: trust the caller rather than refuse to work
        }
        if (!actual.equals("anon_inode:" + kind)) {
            throw new BpfException("bpf_obj_get_info_by_fd", object, Errno.EINVAL,
                    "is " + actual.replace("anon_inode:", "") + ", not " + kind);
        }
    }

    /**
     * The kernel's info struct ({@code size} bytes) for a descriptor that must be of {@code kind}; on
     * any failure the descriptor, which the caller was handing over, is closed.
     */
    static byte[] info(int fd, String kind, int size, String object) {
        try {
            require(fd, kind, object);
            byte[] info = new byte[size];
            IntByReference len = new IntByReference(info.length);
            LibBpfNative.check(LibBpfNative.lib().bpf_obj_get_info_by_fd(fd, info, len), "bpf_obj_get_info_by_fd", object);
            return info;
        } catch (RuntimeException e) {
            LibC.closeQuietly(fd);
            throw e;
        }
    }
}
