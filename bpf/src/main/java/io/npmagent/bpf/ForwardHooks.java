package io.npmagent.bpf;

import io.npmagent.bpf.libbpf.BpfException;
import io.npmagent.bpf.libbpf.BpfMap;
import io.npmagent.bpf.libbpf.BpfProgram;
import io.npmagent.bpf.libbpf.NetfilterLink;
import io.npmagent.bpf.libbpf.NetnsThread;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The forward hook of forward.h: {@code npm_forward} linked at the netfilter forward and local-in hooks of
 * the node's namespace, IPv4 and IPv6, where egress to an address that is no pod is judged after
 * kube-proxy's DNAT. Each link is pinned ({@code link_npm_forward_v4}, {@code _v6}, {@code
 * link_npm_forward_input_v4}, {@code _v6}), so it outlives the agent as the tc
 * filters do; a new run links its own program first, then replaces the pin, which ends the old link
 * (both judge alike meanwhile, from the same maps). {@code npm_forward_hooks} tells tc which
 * families have a hook: tc defers only to a hook that exists, and judges the ClusterIP itself
 * otherwise, which admits less, never more.
 */
final class ForwardHooks implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ForwardHooks.class.getName());
    static final String PROGRAM = "npm_forward";
    static final String MAP = "npm_forward_hooks";
    /** After the filter table's FORWARD chain (0; DNAT happened at PREROUTING already); a new run's link takes the next free one. */
    static final int PRIORITY = 1;
    /** How many priorities from {@link #PRIORITY} a new link may take: all of them after the filter table (0), before security (50). */
    private static final int PRIORITIES = 16;
    private static final int EBUSY = 16;
    private static final int[] FAMILIES = {NetfilterLink.NFPROTO_IPV4, NetfilterLink.NFPROTO_IPV6};
    /**
     * Forward, and local in: a DNAT to the node itself (the kubernetes Service, a host-network backend)
     * leads there. The node is always admitted, but what the hook admits is remembered for the replies.
     */
    private static final int[] HOOKS = {NetfilterLink.NF_INET_FORWARD, NetfilterLink.NF_INET_LOCAL_IN};

    private final BpfProgram program;
    private final BpfMap hooks;
    private final Path pinDir;
    private final NetnsThread netns;
    /** This run's links by pin: the descriptors keep a link alive while its pin is being replaced. */
    private final Map<Path, NetfilterLink> links = new HashMap<>();
    /** Why a family has no hook, by family; empty when both have theirs. */
    private final Map<Integer, String> problems = new TreeMap<>();

    private ForwardHooks(BpfProgram program, BpfMap hooks, Path pinDir, NetnsThread netns) {
        this.program = program;
        this.hooks = hooks;
        this.pinDir = pinDir;
        this.netns = netns;
    }

    /** Links {@code program} for both families (a family that fails is left to tc, and said why). */
    static ForwardHooks attach(BpfProgram program, BpfMap hooks, Path pinDir, NetnsThread netns) {
        ForwardHooks h = new ForwardHooks(program, hooks, pinDir, netns);
        h.link(true);
        return h;
    }

    /**
     * Links every (family, hook) ({@code all}, a new run's program), or only those whose pin is gone or
     * runs another program; then tells tc which families have all their hooks. Returns how many it linked.
     */
    private int link(boolean all) {
        int linked = 0;
        int bits = 0;
        for (int i = 0; i < FAMILIES.length; i++) {
            int family = FAMILIES[i];
            try {
                for (int hook : HOOKS) {
                    if (all || !runsOurs(pin(family, hook))) {
                        link(family, hook);
                        linked++;
                    }
                }
                problems.remove(family);
                bits |= 1 << i;
            } catch (BpfException | IOException e) {
                String problem = "no forward hook for " + (family == NetfilterLink.NFPROTO_IPV4 ? "IPv4" : "IPv6") + " ("
                        + e.getMessage() + "): its egress to addresses that are no pod is judged before DNAT, so a policy "
                        + "admitting a Service's pods does not admit its ClusterIP";
                if (!problem.equals(problems.put(family, problem))) {
                    LOG.log(System.Logger.Level.WARNING, "bpf: " + problem);
                }
            }
        }
        writeBits(hooks, bits);
        return linked;
    }

    private void link(int family, int hook) throws IOException {
        // The kernel refuses two BPF hooks of one priority on a hook (EBUSY), and the old link must judge
        // until the new one does: the new link takes the priority the old one does not use.
        Path pin = pin(family, hook);
        NetfilterLink link = linkBeside(family, hook, priorityOf(pin));
        // Pinned aside (bpffs refuses dots in names), then moved over the old pin in one rename: the old
        // link ends there (once this run's descriptor of it, if any, is closed), and a crash at any point
        // leaves one link pinned.
        Path fresh = pin.resolveSibling(pin.getFileName() + "_new");
        try {
            Files.deleteIfExists(fresh);
            link.pin(fresh);
            Files.move(fresh, pin, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException | RuntimeException e) {
            link.close();
            throw e;
        }
        NetfilterLink old = links.put(pin, link);
        if (old != null) {
            old.close();
        }
    }

    /**
     * A new link at the first free priority from {@link #PRIORITY} on that is not {@code pinned}'s. Not
     * simply the other of two: on a real node (pipelines/node-e2e, kernel 6.18) a hook's BPF priority was
     * seen taken (EBUSY) with no link left that held it, after a few agent generations; the next free
     * one serves as well, since every priority here is after DNAT and before SNAT.
     */
    private NetfilterLink linkBeside(int family, int hook, int pinned) {
        BpfException busy = null;
        for (int priority = PRIORITY; priority < PRIORITY + PRIORITIES; priority++) {
            if (priority == pinned) {
                continue;
            }
            int p = priority;
            try {
                return netns.get(() -> NetfilterLink.attach(program, family, hook, p));
            } catch (BpfException e) {
                if (e.errno() != EBUSY) {
                    throw e;
                }
                busy = e;
            }
        }
        throw busy;
    }

    /** The priority of the link pinned at {@code pin}, 0 when there is none. */
    private static int priorityOf(Path pin) {
        if (!Files.exists(pin)) {
            return 0;
        }
        try (NetfilterLink old = NetfilterLink.openPinned(pin)) {
            return old.info().priority();
        } catch (BpfException e) {
            return 0;
        }
    }

    /** npm_forward_hooks: which families tc may leave egress to the hook (1 IPv4, 2 IPv6; 0: tc judges all). */
    static void writeBits(BpfMap hooks, int bits) {
        hooks.update(ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(0).array(),
                ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(bits).array());
    }

    Path pin(int family, int hook) {
        return pinDir.resolve("link_" + PROGRAM + (hook == NetfilterLink.NF_INET_FORWARD ? "" : "_input")
                + (family == NetfilterLink.NFPROTO_IPV4 ? "_v4" : "_v6"));
    }

    /** Links again where a pin is gone or no longer runs this program (someone removed it); returns how many. */
    int repair() {
        int linked = link(false);
        if (linked > 0) {
            LOG.log(System.Logger.Level.WARNING, "bpf: {0} forward hook link(s) were gone; linked again", linked);
        }
        return linked;
    }

    private boolean runsOurs(Path pin) {
        if (!Files.exists(pin)) {
            return false;
        }
        try (NetfilterLink l = NetfilterLink.openPinned(pin)) {
            return l.info().programId() == program.id();
        } catch (BpfException e) {
            return false;
        }
    }

    /** Null when both families have their hook, else what is missing and what that means. */
    String problem() {
        return problems.isEmpty() ? null : String.join("; ", problems.values());
    }

    @Override
    public void close() {
        links.values().forEach(NetfilterLink::close); // the pins keep the links
        links.clear();
        program.close();
        hooks.close();
    }
}
