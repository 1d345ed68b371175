package io.npmagent.bpf.libbpf;

import java.util.Locale;
import jnr.ffi.Pointer;

/**
 * Attaching programs to an interface's tc hook: a clsact qdisc with one direct-action cls_bpf filter
 * of ours per direction, through libbpf's netlink code (bpf_tc_*).
 *
 * <p><b>Our filter is recognisable without memory:</b> it always sits at {@link #PRIORITY} with
 * {@link #HANDLE}, so a restarted agent can query, replace or remove exactly its own filter and never
 * another tool's, and a sweep can find leftovers on interfaces it no longer knows.
 * <ul>
 *   <li>{@code HANDLE} 0x6e706d is "npm" in ASCII: unlikely to collide, readable in {@code tc filter show}.</li>
 *   <li>{@code PRIORITY} 1 runs our filter before any other on the hook: policy must judge a packet
 *       before anything can redirect it past us. (A direct-action filter that returns TC_ACT_OK ends
 *       classification, so filters after ours only run where our program returns TC_ACT_UNSPEC.)</li>
 * </ul>
 *
 * <p><b>Replace, never detach-then-attach.</b> {@link #attach} always passes BPF_TC_F_REPLACE: when our
 * filter exists, the kernel swaps the program in place (one netlink request), so a restarted agent's
 * new program takes over with no moment in which packets pass unjudged.
 *
 * <p><b>Namespaces.</b> libbpf opens its netlink socket in the calling thread's network namespace, and
 * {@code ifindex} is looked up there: call these from a {@link NetnsThread} for interfaces of another
 * namespace.
 *
 * <p>The clsact qdisc is created when missing and never removed: other tools may own filters on it,
 * and deleting it would drop theirs.
 */
public final class Tc {
    private Tc() {}

    /** The filter handle of every filter we attach ("npm"). */
    public static final int HANDLE = 0x6e706d;
    /** The filter priority of every filter we attach: first on the hook. */
    public static final int PRIORITY = 1;

    static final int BPF_TC_F_REPLACE = 1;

    /** Which side of the interface: clsact's ingress (packets the interface receives) or egress (packets it sends). */
    public enum Hook {
        INGRESS(1), // BPF_TC_INGRESS
        EGRESS(2); // BPF_TC_EGRESS

        final int attachPoint;

        Hook(int attachPoint) {
            this.attachPoint = attachPoint;
        }
    }

    /** Attaches {@code program} as our filter on the hook, replacing our previous program there in one step. */
    public static void attach(int ifindex, Hook hook, BpfProgram program) {
        String object = object(ifindex, hook);
        Pointer h = hook(ifindex, hook);
        LibBpfLog.clearKernelMessage();
        int ret = LibBpfNative.lib().bpf_tc_hook_create(h);
        if (ret < 0 && ret != -Errno.EEXIST) {
            throw error("bpf_tc_hook_create", object, -ret);
        }
        Pointer opts = opts();
        opts.putInt(Layouts.TC_OPTS_PROG_FD, program.fd());
        opts.putInt(Layouts.TC_OPTS_FLAGS, BPF_TC_F_REPLACE);
        LibBpfLog.clearKernelMessage();
        ret = LibBpfNative.lib().bpf_tc_attach(h, opts);
        if (ret < 0) {
            throw error("bpf_tc_attach", program.name() + " on " + object, -ret);
        }
    }

    /**
     * Removes our filter from the hook; false when there was none, or no clsact qdisc. Only our handle
     * and priority are touched. An interface that does not exist is ENODEV, an error: it most often
     * means the call ran in the wrong network namespace, which "nothing to detach" would hide.
     */
    public static boolean detach(int ifindex, Hook hook) {
        Pointer h = hook(ifindex, hook);
        LibBpfLog.clearKernelMessage();
        int ret = LibBpfNative.lib().bpf_tc_detach(h, opts());
        if (absent(ret)) {
            return false;
        }
        if (ret < 0) {
            throw error("bpf_tc_detach", object(ifindex, hook), -ret);
        }
        return true;
    }

    /** The id of the program our filter runs on the hook, 0 when there is none. */
    public static int attachedProgramId(int ifindex, Hook hook) {
        Pointer h = hook(ifindex, hook);
        Pointer opts = opts();
        LibBpfLog.clearKernelMessage();
        int ret = LibBpfNative.lib().bpf_tc_query(h, opts);
        if (absent(ret)) {
            return 0;
        }
        if (ret < 0) {
            throw error("bpf_tc_query", object(ifindex, hook), -ret);
        }
        return opts.getInt(Layouts.TC_OPTS_PROG_ID);
    }

    /**
     * "Nothing of ours there". The kernel says it three ways: detach finds the qdisc but not our filter
     * (ENOENT); query finds no filter chain (EINVAL, "Cannot find specified filter chain"); either finds
     * no clsact qdisc at all (EINVAL, "Parent Qdisc doesn't exists"). A missing interface is ENODEV and
     * stays an error: the caller named something that is not there.
     */
    private static boolean absent(int ret) {
        return ret == -Errno.ENOENT || ret == -Errno.EINVAL;
    }

    /** The netlink refusal's own words (libbpf logs them; {@link LibBpfLog} keeps them) go into the exception. */
    private static BpfException error(String operation, String object, int errno) {
        String kernel = LibBpfLog.kernelMessage();
        return new BpfException(operation, object, errno, LibBpfNative.strerror(errno), kernel.isEmpty() ? "" : "; kernel: " + kernel);
    }

    private static Pointer hook(int ifindex, Hook hook) {
        if (ifindex <= 0) {
            throw new IllegalArgumentException("ifindex must be positive, got " + ifindex);
        }
        Pointer h = Layouts.struct(Layouts.TC_HOOK_SIZE);
        h.putLong(0, Layouts.TC_HOOK_SIZE);
        h.putInt(Layouts.TC_HOOK_IFINDEX, ifindex);
        h.putInt(Layouts.TC_HOOK_ATTACH_POINT, hook.attachPoint);
        return h;
    }

    /** Our handle and priority; program, flags and id zero, as query and detach require. */
    private static Pointer opts() {
        Pointer o = Layouts.struct(Layouts.TC_OPTS_SIZE);
        o.putLong(0, Layouts.TC_OPTS_SIZE);
        o.putInt(Layouts.TC_OPTS_HANDLE, HANDLE);
        o.putInt(Layouts.TC_OPTS_PRIORITY, PRIORITY);
        return o;
    }

    private static String object(int ifindex, Hook hook) {
        return "ifindex " + ifindex + " " + hook.name().toLowerCase(Locale.ROOT);
    }
}
