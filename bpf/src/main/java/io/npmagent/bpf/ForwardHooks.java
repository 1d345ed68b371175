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
import java.util.ArrayList;
import java.util.List;

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
    /** After the filter table's FORWARD chain (0; DNAT happened at PREROUTING already); a new run's link takes 2 if 1 is taken. */
    static final int PRIORITY = 1;
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
    private final List<NetfilterLink> links = new ArrayList<>();
    private String problem;

    private ForwardHooks(BpfProgram program, BpfMap hooks, Path pinDir, NetnsThread netns) {
        this.program = program;
        this.hooks = hooks;
        this.pinDir = pinDir;
        this.netns = netns;
    }

    /** Links {@code program} for both families (a family that fails is left to tc, and said why). */
    static ForwardHooks attach(BpfProgram program, BpfMap hooks, Path pinDir, NetnsThread netns) {
        ForwardHooks h = new ForwardHooks(program, hooks, pinDir, netns);
        h.linkAll();
        return h;
    }

    private void linkAll() {
        int bits = 0;
        problem = null;
        links.forEach(NetfilterLink::close);
        links.clear();
        for (int i = 0; i < FAMILIES.length; i++) {
            int family = FAMILIES[i];
            try {
                for (int hook : HOOKS) {
                    link(family, hook);
                }
                bits |= 1 << i;
            } catch (BpfException | IOException e) {
                problem = "no forward hook for " + (family == NetfilterLink.NFPROTO_IPV4 ? "IPv4" : "IPv6") + " (" + e.getMessage()
                        + "): its egress to addresses that are no pod is judged before DNAT, so a policy admitting a Service's pods "
                        + "does not admit its ClusterIP";
                LOG.log(System.Logger.Level.WARNING, "bpf: " + problem);
            }
        }
        setBits(bits);
    }

    private void link(int family, int hook) throws IOException {
        // The kernel refuses two BPF hooks of one priority on a hook (EBUSY), and the old link must judge
        // until the new one does: the new link takes the priority the old one does not use.
        Path pin = pin(family, hook);
        int priority = priorityOf(pin) == PRIORITY ? PRIORITY + 1 : PRIORITY;
        NetfilterLink link = netns.get(() -> NetfilterLink.attach(program, family, hook, priority));
        links.add(link);
        // Pinned aside (bpffs refuses dots in names), then moved over the old pin in one rename: the old
        // link ends there, and a crash at any point leaves one link pinned.
        Path fresh = pin.resolveSibling(pin.getFileName() + "_new");
        Files.deleteIfExists(fresh);
        link.pin(fresh);
        Files.move(fresh, pin, StandardCopyOption.REPLACE_EXISTING);
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

    private void setBits(int bits) {
        byte[] value = ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(bits).array();
        hooks.update(ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(0).array(), value);
    }

    Path pin(int family, int hook) {
        return pinDir.resolve("link_" + PROGRAM + (hook == NetfilterLink.NF_INET_FORWARD ? "" : "_input")
                + (family == NetfilterLink.NFPROTO_IPV4 ? "_v4" : "_v6"));
    }

    /** Links again when a pin is gone or no longer runs this program (someone removed it); returns how many. */
    int repair() {
        int missing = 0;
        for (int family : FAMILIES) {
            for (int hook : HOOKS) {
                if (!runsOurs(pin(family, hook))) {
                    missing++;
                }
            }
        }
        if (missing > 0) {
            LOG.log(System.Logger.Level.WARNING, "bpf: {0} forward hook link(s) gone; linking again", missing);
            linkAll();
        }
        return missing;
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
        return problem;
    }

    @Override
    public void close() {
        links.forEach(NetfilterLink::close); // the pins keep the links
        links.clear();
        program.close();
        hooks.close();
    }
}
