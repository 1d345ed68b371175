package io.npmagent.bpf;

import io.npmagent.bpf.libbpf.BpfException;
import io.npmagent.bpf.libbpf.BpfMap;
import io.npmagent.bpf.libbpf.BpfProgram;
import io.npmagent.bpf.libbpf.CgroupLink;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The sock_ops program of congestion.h ({@code npm_sock_ops}) linked at the cgroup that holds the pods'
 * processes (the agent's {@code --cgroup-root}), where it gives each pod's new TCP connections the
 * congestion control its {@code npm-agent.io/tcp-congestion} names. One link for every pod: the program
 * tells pods apart by the socket's local address, so it needs no per-pod cgroup and nothing to do when
 * pods come and go. The link is pinned ({@code link_npm_sock_ops}) and outlives the agent; a new run
 * swaps its own program into the pinned link in place, or, where the cgroup root changed, links anew
 * and moves the pin over the old link, which ends it.
 */
final class CongestionHook implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(CongestionHook.class.getName());
    static final String PROGRAM = "npm_sock_ops";
    static final String STATS = "npm_tcp_stats";
    static final String PIN = "link_" + PROGRAM;

    private final BpfProgram program;
    private final BpfMap stats;
    private final Path cgroup;
    private final Path pin;
    private CgroupLink link;
    private String problem;

    private CongestionHook(BpfProgram program, BpfMap stats, Path pinDir, Path cgroup) {
        this.program = program;
        this.stats = stats;
        this.cgroup = cgroup;
        this.pin = pinDir.resolve(PIN);
    }

    /** Links {@code program} at {@code cgroup}; a failure is kept as {@link #problem()} (pods keep the default). */
    static CongestionHook attach(BpfProgram program, BpfMap stats, Path pinDir, Path cgroup) {
        CongestionHook h = new CongestionHook(program, stats, pinDir, cgroup);
        h.link(true);
        return h;
    }

    /** Links again if the pin is gone or runs another program; returns 1 if it did. */
    int repair() {
        if (runsOurs()) {
            return 0;
        }
        link(false);
        if (problem == null) {
            LOG.log(System.Logger.Level.WARNING, "bpf: the congestion control link at {0} was gone; linked again", cgroup);
            return 1;
        }
        return 0;
    }

    private void link(boolean fresh) {
        try {
            CgroupLink old = Files.exists(pin) ? CgroupLink.openPinned(pin) : null;
            if (old != null && old.info().cgroupId() == cgroupId() && old.info().attachType() == CgroupLink.ATTACH_CGROUP_SOCK_OPS) {
                old.update(program); // in place: the cgroup never lacks the program
                replace(old);
            } else {
                if (old != null) {
                    old.close();
                }
                CgroupLink made = CgroupLink.attach(program, cgroup, CgroupLink.ATTACH_CGROUP_SOCK_OPS);
                // Pinned aside (bpffs refuses dots in names), then moved over any old pin in one rename.
                Path aside = pin.resolveSibling(PIN + "_new");
                try {
                    Files.deleteIfExists(aside);
                    made.pin(aside);
                    Files.move(aside, pin, StandardCopyOption.REPLACE_EXISTING);
                } catch (IOException | RuntimeException e) {
                    made.close();
                    throw e;
                }
                replace(made);
            }
            if (problem != null || fresh) {
                LOG.log(System.Logger.Level.INFO, "bpf: pods'' TCP congestion control set by {0} at cgroup {1}", PROGRAM, cgroup);
            }
            problem = null;
        } catch (BpfException | IOException e) {
            String now = "no congestion control link at cgroup " + cgroup + " (" + e.getMessage()
                    + "): pods' npm-agent.io/tcp-congestion is not applied, their connections keep the default";
            if (!now.equals(problem)) {
                LOG.log(System.Logger.Level.WARNING, "bpf: " + now);
            }
            problem = now;
        }
    }

    private void replace(CgroupLink now) {
        if (link != null && link != now) {
            link.close();
        }
        link = now;
    }

    private long cgroupId() throws IOException {
        return ((Number) Files.getAttribute(cgroup, "unix:ino")).longValue();
    }

    private boolean runsOurs() {
        if (!Files.exists(pin)) {
            return false;
        }
        try (CgroupLink l = CgroupLink.openPinned(pin)) {
            return l.info().programId() == program.id();
        } catch (BpfException e) {
            return false;
        }
    }

    /** Null while the link is in place, else why pods' congestion controls are not applied. */
    String problem() {
        return problem;
    }

    /** Connections given their pod's congestion control, and those the kernel refused it to, since the map was made. */
    long[] counts() {
        long[] out = new long[2];
        for (int i = 0; i < 2; i++) {
            byte[] perCpu = stats.lookup(ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(0, i).array());
            if (perCpu != null) {
                ByteBuffer b = ByteBuffer.wrap(perCpu).order(ByteOrder.nativeOrder());
                while (b.remaining() >= 8) {
                    out[i] += b.getLong();
                }
            }
        }
        return out;
    }

    @Override
    public void close() {
        if (link != null) {
            link.close(); // the pin keeps the link
        }
        program.close();
        stats.close();
    }
}
