package io.npmagent.bpf.libbpf;

import java.nio.file.Path;
import jnr.ffi.LastError;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.Out;
import jnr.ffi.annotations.SaveError;

/**
 * The few libc calls eBPF work needs beside libbpf: entering a network namespace (setns is per
 * thread, which no Java API offers), a netlink socket (no Java API opens one either), duplicating and closing file descriptors that libbpf hands out,
 * and statfs to recognise a bpffs mount. Functions return -1 and set errno, as libc does.
 */
final class LibC {
    private LibC() {}

    /** The C signatures; public only for jnr-ffi's generated class (see {@link LibBpfNative.Api}). */
    public interface Api {
        @SaveError
        int open(String path, int flags);

        @SaveError
        int close(int fd);

        @SaveError
        int setns(int fd, int nstype);

        @SaveError
        int statfs(String path, @Out byte[] buf);

        /** Only the three-int form (F_DUPFD_CLOEXEC): an int vararg is passed like a fixed one on LP64 Linux. */
        @SaveError
        int fcntl(int fd, int cmd, int arg);

        @SaveError
        int socket(int domain, int type, int protocol);

        @SaveError
        long send(int fd, @In byte[] buf, long len, int flags);

        @SaveError
        long recv(int fd, @Out byte[] buf, long len, int flags);

        /** syscall(SYS_bpf, cmd, attr, size): for the commands Debian's libbpf 1.1 has no wrapper for. */
        @SaveError
        long syscall(long number, long cmd, @In byte[] attr, long size);
    }

    static final int O_RDONLY = 0;
    static final int O_CLOEXEC = 0x80000;
    static final int CLONE_NEWNET = 0x40000000;
    static final int F_DUPFD_CLOEXEC = 1030;
    /** SYS_bpf on x86_64 (arm64: 280). */
    static final long SYS_BPF = System.getProperty("os.arch").equals("aarch64") ? 280 : 321;
    /** BPF_FS_MAGIC from linux/magic.h: the f_type of a bpffs mount. */
    static final long BPF_FS_MAGIC = 0xcafe4a11L;

    private static final class Holder {
        static final Api LIBC = LibraryLoader.create(Api.class).failImmediately().load("c");
    }

    static Api lib() {
        return Holder.LIBC;
    }

    static int errno() {
        return LastError.getLastError(Runtime.getRuntime(lib()));
    }

    /**
     * A second descriptor for the same kernel object, close-on-exec, numbered 3 or above (as libbpf keeps
     * its own, so a stray close of stdin never hits a map). Handles own their descriptor this way, so a
     * map or program stays usable after the object that loaded it is closed.
     */
    static int dup(int fd, String object) {
        int copy = lib().fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (copy < 0) {
            throw LibBpfNative.error("fcntl(F_DUPFD_CLOEXEC)", object, errno());
        }
        return copy;
    }

    static void closeQuietly(int fd) {
        if (fd >= 0) {
            lib().close(fd);
        }
    }

    /** Whether {@code path} lies on a bpffs mount (statfs magic); false also when it does not exist. */
    static boolean isBpffs(Path path) {
        byte[] buf = new byte[Layouts.STATFS_SIZE];
        if (lib().statfs(path.toString(), buf) != 0) {
            return false;
        }
        long magic = Layouts.view(buf).getLong(Layouts.STATFS_F_TYPE);
        return magic == BPF_FS_MAGIC;
    }
}
