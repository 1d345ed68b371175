package io.npmagent.bpf.libbpf;

/**
 * The errno values this package decides on, and symbolic names for messages: an operator searching
 * for "E2BIG" finds the kernel's documentation faster than one searching for "Argument list too long".
 * Values are Linux's (the same on every architecture we run on).
 */
final class Errno {
    private Errno() {}

    static final int EPERM = 1;
    static final int ENOENT = 2;
    static final int E2BIG = 7;
    static final int EBADF = 9;
    static final int EAGAIN = 11;
    static final int ENOMEM = 12;
    static final int EACCES = 13;
    static final int EFAULT = 14;
    static final int EBUSY = 16;
    static final int EEXIST = 17;
    static final int ENODEV = 19;
    static final int ENOTDIR = 20;
    static final int EINVAL = 22;
    static final int ENOSPC = 28;
    static final int ENOSYS = 38;
    static final int EOPNOTSUPP = 95;
    /** Kernel-internal "not supported", which leaks to user space from bpf() (batch ops, some probes). */
    static final int ENOTSUPP = 524;

    /** "EBADF" for 9; "errno N" for values not listed here. */
    static String name(int errno) {
        switch (errno) {
            case EPERM: return "EPERM";
            case ENOENT: return "ENOENT";
            case E2BIG: return "E2BIG";
            case EBADF: return "EBADF";
            case EAGAIN: return "EAGAIN";
            case ENOMEM: return "ENOMEM";
            case EACCES: return "EACCES";
            case EFAULT: return "EFAULT";
            case EBUSY: return "EBUSY";
            case EEXIST: return "EEXIST";
            case ENODEV: return "ENODEV";
            case ENOTDIR: return "ENOTDIR";
            case EINVAL: return "EINVAL";
            case ENOSPC: return "ENOSPC";
            case ENOSYS: return "ENOSYS";
            case EOPNOTSUPP: return "EOPNOTSUPP";
            case ENOTSUPP: return "ENOTSUPP";
            default: return "errno " + errno;
        }
    }
}
