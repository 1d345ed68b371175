package io.npmagent.bpf.libbpf;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;

/**
 * A BPF netfilter link: a {@code BPF_PROG_TYPE_NETFILTER} program on one hook of one protocol family in
 * the calling thread's network namespace (enter the node's with {@link NetnsThread}). Debian's libbpf 1.1
 * predates these links, so they are made with the bpf syscall itself ({@code BPF_LINK_CREATE}). The link
 * lives while a descriptor or a pin holds it: pinned on bpffs it outlives the agent, as the tc filters
 * do, and a restarted agent finds it by its pin. Netfilter links cannot swap their program
 * ({@code BPF_LINK_UPDATE} is refused), so a new program gets a new link and the old one is unpinned.
 */
public final class NetfilterLink extends LinkFd {
    public static final int PROG_TYPE_NETFILTER = 32;
    public static final int ATTACH_NETFILTER = 45;
    public static final int NFPROTO_IPV4 = 2;
    public static final int NFPROTO_IPV6 = 10;
    public static final int NF_INET_LOCAL_IN = 1;
    public static final int NF_INET_FORWARD = 2;
    private static final int BPF_PROG_LOAD = 5;
    private static final int BPF_LINK_CREATE = 28;

    /** What the kernel says of a link: its program, family, hook and priority. */
    public record Info(int id, int programId, int family, int hook, int priority) {}

    private NetfilterLink(int fd, String name) {
        super(fd, name);
    }

    /** Attaches {@code program} at {@code hook} of {@code family} with {@code priority}, in this thread's namespace. */
    public static NetfilterLink attach(BpfProgram program, int family, int hook, int priority) {
        ByteBuffer attr = attr(32);
        attr.putInt(0, program.fd()).putInt(8, ATTACH_NETFILTER).putInt(16, family).putInt(20, hook).putInt(24, priority);
        String what = program.name() + " at netfilter family " + family + " hook " + hook + " priority " + priority;
        long fd = LibC.lib().syscall(LibC.SYS_BPF, BPF_LINK_CREATE, attr.array(), attr.capacity());
        if (fd < 0) {
            throw LibBpfNative.error("BPF_LINK_CREATE", what, LibC.errno());
        }
        return new NetfilterLink((int) fd, what);
    }

    /** Opens a link pinned on bpffs (this run's or an earlier agent's). */
    public static NetfilterLink openPinned(Path path) {
        return new NetfilterLink(openPinnedFd(path), path.toString());
    }

    public Info info() {
        ByteBuffer b = rawInfo();
        // struct bpf_link_info: type, id, prog_id; the netfilter member of its union at 16: pf, hooknum, priority.
        return new Info(b.getInt(4), b.getInt(8), b.getInt(16), b.getInt(20), b.getInt(24));
    }

    /**
     * Whether this kernel loads netfilter programs: a two-instruction one ({@code return NF_ACCEPT}) is
     * loaded and closed again.
     */
    public static boolean programsSupported() {
        ByteBuffer insns = ByteBuffer.allocate(16).order(ByteOrder.nativeOrder());
        insns.put(0, (byte) 0xb7).putInt(4, 1); // r0 = 1
        insns.put(8, (byte) 0x95); // exit
        jnr.ffi.Pointer code = Layouts.copy(insns.array());
        jnr.ffi.Pointer license = Layouts.cString("GPL");
        ByteBuffer attr = attr(72);
        attr.putInt(0, PROG_TYPE_NETFILTER).putInt(4, 2).putLong(8, code.address()).putLong(16, license.address())
                .putInt(68, ATTACH_NETFILTER);
        long fd = LibC.lib().syscall(LibC.SYS_BPF, BPF_PROG_LOAD, attr.array(), attr.capacity());
        java.lang.ref.Reference.reachabilityFence(code);
        java.lang.ref.Reference.reachabilityFence(license);
        if (fd < 0) {
            return false;
        }
        LibC.closeQuietly((int) fd);
        return true;
    }

}
