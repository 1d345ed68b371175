package io.npmagent.bpf;

import io.npmagent.bpf.libbpf.BpfException;
import io.npmagent.bpf.libbpf.BpfProgram;
import io.npmagent.bpf.libbpf.CgroupLink;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * One of our programs linked at the cgroup that holds the pods' processes (the agent's {@code
 * --cgroup-root}) for one attach type: one link for every pod, since the programs tell pods apart by
 * their sockets' addresses, so nothing to do when pods come and go. The link is pinned ({@code
 * link_<program>}) and outlives the agent; a new run swaps its own program into the pinned link in
 * place (the cgroup is never without one), or, where the cgroup root changed, links anew and moves
 * the pin over the old link, which ends it. A failure is kept as {@link #problem()}, never thrown:
 * what these programs add (congestion control, back-pressure) is not what enforces policy or rates.
 */
final class PinnedCgroupLink implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(PinnedCgroupLink.class.getName());

    private final BpfProgram program;
    private final Path cgroup;
    private final int attachType;
    private final Path pin;
    private final String purpose;
    private final String without;
    private CgroupLink link;
    private String problem;

    /**
     * @param purpose what the program does, for the log ("pods' TCP congestion control")
     * @param without what is lost while it is not linked, for the problem
     */
    private PinnedCgroupLink(BpfProgram program, Path pinDir, Path cgroup, int attachType, String purpose, String without) {
        this.program = program;
        this.cgroup = cgroup;
        this.attachType = attachType;
        this.pin = pinDir.resolve("link_" + program.name());
        this.purpose = purpose;
        this.without = without;
    }

    static PinnedCgroupLink attach(BpfProgram program, Path pinDir, Path cgroup, int attachType, String purpose, String without) {
        PinnedCgroupLink l = new PinnedCgroupLink(program, pinDir, cgroup, attachType, purpose, without);
        l.link(true);
        return l;
    }

    /** Links again if the pin is gone or runs another program; returns 1 if it did. */
    int repair() {
        if (runsOurs()) {
            return 0;
        }
        link(false);
        if (problem == null) {
            LOG.log(System.Logger.Level.WARNING, "bpf: the link of {0} at {1} was gone; linked again", program.name(), cgroup);
            return 1;
        }
        return 0;
    }

    private void link(boolean fresh) {
        try {
            CgroupLink old = Files.exists(pin) ? CgroupLink.openPinned(pin) : null;
            if (old != null && old.info().cgroupId() == cgroupId() && old.info().attachType() == attachType) {
                old.update(program); // in place: the cgroup never lacks the program
                replace(old);
            } else {
                if (old != null) {
                    old.close();
                }
                CgroupLink made = CgroupLink.attach(program, cgroup, attachType);
                // Pinned aside (bpffs refuses dots in names), then moved over any old pin in one rename.
                Path aside = pin.resolveSibling(pin.getFileName() + "_new");
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
                LOG.log(System.Logger.Level.INFO, "bpf: {0} by {1} at cgroup {2}", purpose, program.name(), cgroup);
            }
            problem = null;
        } catch (BpfException | IOException e) {
            String now = "no " + program.name() + " link at cgroup " + cgroup + " (" + e.getMessage() + "): " + without;
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

    /** Null while the link is in place, else why not and what that costs. */
    String problem() {
        return problem;
    }

    @Override
    public void close() {
        if (link != null) {
            link.close(); // the pin keeps the link
        }
        program.close();
    }
}
