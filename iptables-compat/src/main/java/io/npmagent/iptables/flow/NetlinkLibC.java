package io.npmagent.iptables.flow;

import jnr.ffi.LastError;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.Out;
import jnr.ffi.annotations.SaveError;

/**
 * The libc calls the NFLOG reader needs and Java has no API for: a netlink socket, its options, and
 * entering a network namespace (setns is per thread). Functions return -1 and set errno, as libc does.
 * This module's own small binding (modules depend only on {@code dataplane}), in the shape of the bpf
 * module's.
 */
final class NetlinkLibC {
    private NetlinkLibC() {}

    /** The C signatures; public only for jnr-ffi's generated class. */
    public interface Api {
        @SaveError
        int socket(int domain, int type, int protocol);

        @SaveError
        int setsockopt(int fd, int level, int name, @In byte[] value, int len);

        @SaveError
        long send(int fd, @In byte[] buf, long len, int flags);

        @SaveError
        long recv(int fd, @Out byte[] buf, long len, int flags);

        @SaveError
        int close(int fd);

        @SaveError
        int open(String path, int flags);

        @SaveError
        int setns(int fd, int nstype);
    }

    static final int AF_NETLINK = 16;
    static final int SOCK_RAW = 3;
    static final int SOCK_CLOEXEC = 0x80000;
    static final int NETLINK_NETFILTER = 12;
    static final int SOL_SOCKET = 1;
    static final int SO_RCVBUF = 8;
    static final int SO_RCVTIMEO = 20;
    static final int SO_RCVBUFFORCE = 33;
    static final int O_RDONLY = 0;
    static final int O_CLOEXEC = 0x80000;
    static final int CLONE_NEWNET = 0x40000000;
    static final int EINTR = 4;
    static final int EAGAIN = 11;
    static final int ENOBUFS = 105;

    private static final class Holder {
        static final Api LIBC = LibraryLoader.create(Api.class).failImmediately().load("c");
    }

    static Api lib() {
        return Holder.LIBC;
    }

    static int errno() {
        return LastError.getLastError(Runtime.getRuntime(lib()));
    }

    /** Moves the calling thread into the network namespace of {@code nsFile} (/run/netns/NAME, /proc/PID/ns/net). */
    static void enterNetns(String nsFile) {
        int fd = lib().open(nsFile, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            throw new IllegalStateException("cannot open network namespace " + nsFile + ": errno " + errno());
        }
        try {
            if (lib().setns(fd, CLONE_NEWNET) != 0) {
                throw new IllegalStateException("cannot enter network namespace " + nsFile + ": errno " + errno());
            }
        } finally {
            lib().close(fd);
        }
    }
}
