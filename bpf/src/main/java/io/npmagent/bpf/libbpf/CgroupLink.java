package io.npmagent.bpf.libbpf;

import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * A BPF cgroup link: a program attached to a cgroup (cgroup2) for one attach type, run for the
 * sockets of every process in that cgroup and below it. Made with the bpf syscall ({@code
 * BPF_LINK_CREATE}, as {@link NetfilterLink}); the link lives while a descriptor or a pin holds it, so
 * pinned on bpffs it outlives the agent. Unlike a netfilter link, a cgroup link swaps its program in
 * place ({@code BPF_LINK_UPDATE}): a restarted agent gives the pinned link its own program, and the
 * cgroup is never without one.
 */
public final class CgroupLink extends LinkFd {
    public static final int ATTACH_CGROUP_INET_EGRESS = 1;
    public static final int ATTACH_CGROUP_SOCK_OPS = 3;
    private static final int BPF_LINK_CREATE = 28;
    private static final int BPF_LINK_UPDATE = 29;
    private static final int O_DIRECTORY = 0x10000;

    /** What the kernel says of a link: its program, the cgroup (by id) and attach type. */
    public record Info(int id, int programId, long cgroupId, int attachType) {}

    private CgroupLink(int fd, String name) {
        super(fd, name);
    }

    /** Attaches {@code program} to the cgroup at {@code cgroup} (a directory of a cgroup2 mount) for {@code attachType}. */
    public static CgroupLink attach(BpfProgram program, Path cgroup, int attachType) {
        String what = program.name() + " at cgroup " + cgroup;
        int cgroupFd = LibC.lib().open(cgroup.toString(), LibC.O_RDONLY | LibC.O_CLOEXEC | O_DIRECTORY);
        if (cgroupFd < 0) {
            throw LibBpfNative.error("open", cgroup.toString(), LibC.errno());
        }
        try {
            ByteBuffer attr = attr(32);
            attr.putInt(0, program.fd()).putInt(4, cgroupFd).putInt(8, attachType);
            long fd = LibC.lib().syscall(LibC.SYS_BPF, BPF_LINK_CREATE, attr.array(), attr.capacity());
            if (fd < 0) {
                throw LibBpfNative.error("BPF_LINK_CREATE", what, LibC.errno());
            }
            return new CgroupLink((int) fd, what);
        } finally {
            LibC.closeQuietly(cgroupFd);
        }
    }

    /** Opens a link pinned on bpffs (this run's or an earlier agent's). */
    public static CgroupLink openPinned(Path path) {
        return new CgroupLink(openPinnedFd(path), path.toString());
    }

    public Info info() {
        ByteBuffer b = rawInfo();
        // struct bpf_link_info: type, id, prog_id; the cgroup member of its union at 16: cgroup_id, attach_type.
        return new Info(b.getInt(4), b.getInt(8), b.getLong(16), b.getInt(24));
    }

    /** Makes the link run {@code program} from now on, in one step. */
    public void update(BpfProgram program) {
        ByteBuffer attr = attr(16);
        attr.putInt(0, fd).putInt(4, program.fd());
        long r = LibC.lib().syscall(LibC.SYS_BPF, BPF_LINK_UPDATE, attr.array(), attr.capacity());
        if (r < 0) {
            throw LibBpfNative.error("BPF_LINK_UPDATE", name + " to " + program.name(), LibC.errno());
        }
    }
}
