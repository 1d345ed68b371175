package io.npmagent.harness.sandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The sandbox's cgroups, as a container runtime gives pods theirs: one cgroup2 directory for the
 * sandbox ({@code npm-agent-sandbox-<name>} at the top of the cgroup2 hierarchy, {@code
 * /sys/fs/cgroup/unified} on a hybrid host, {@code /sys/fs/cgroup} on a cgroup2-only one) and one
 * below it per pod, named as its network namespace ({@code p<n>}). Every process of a pod (its server,
 * the prober's clients, {@code sandbox exec}) starts inside its pod's cgroup, before it opens a socket
 * (a socket belongs to the cgroup its process was in when it was made). The agent's {@code --cgroup-root}
 * is the sandbox's cgroup, so what it attaches there sees every pod of this sandbox and nothing else.
 */
public final class PodCgroups {
    private static final Path MOUNTS = Path.of("/proc/self/mounts");

    private PodCgroups() {}

    /** Where the cgroup2 hierarchy is mounted, if it is. */
    public static Optional<Path> cgroup2Mount() {
        try {
            for (String line : Files.readAllLines(MOUNTS)) {
                String[] f = line.split(" ");
                if (f.length > 2 && f[2].equals("cgroup2")) {
                    return Optional.of(Path.of(f[1].replace("\\040", " ")));
                }
            }
        } catch (IOException e) {
            return Optional.empty();
        }
        return Optional.empty();
    }

    /** The sandbox's cgroup (not created here). */
    public static Path of(Sandbox sandbox) {
        Path mount = cgroup2Mount().orElseThrow(() -> new IllegalStateException(
                "no cgroup2 hierarchy is mounted (/proc/self/mounts): the sandbox's pods need cgroups of their own"));
        return mount.resolve("npm-agent-sandbox-" + sandbox.name());
    }

    /** A pod's cgroup: its network namespace's index under the sandbox's. */
    static Path ofPod(Path sandboxCgroup, int index) {
        return sandboxCgroup.resolve("p" + index);
    }

    static void create(Path cgroup) throws IOException {
        Files.createDirectories(cgroup);
    }

    /**
     * {@code argv} run inside {@code cgroup}: a shell moves itself there, then becomes the command. The
     * path and the command are arguments of the shell, never part of its script.
     */
    static List<String> inside(Path cgroup, List<String> argv) {
        List<String> out = new ArrayList<>(List.of("sh", "-c", "echo $$ > \"$0/cgroup.procs\" && exec \"$@\"", cgroup.toString()));
        out.addAll(argv);
        return out;
    }

    /**
     * Removes {@code cgroup} and the cgroups below it, deepest first, once their processes are gone
     * (the caller has killed them; the kernel takes a moment to empty a cgroup). A cgroup that still
     * has processes after {@code wait} is left, and named in the exception.
     */
    static void remove(Path cgroup, Duration wait) throws IOException {
        if (!Files.isDirectory(cgroup)) {
            return;
        }
        List<Path> dirs;
        try (Stream<Path> walk = Files.walk(cgroup)) {
            dirs = walk.filter(Files::isDirectory).sorted(Comparator.reverseOrder()).toList();
        }
        Instant deadline = Instant.now().plus(wait);
        for (Path d : dirs) {
            while (true) {
                try {
                    Files.deleteIfExists(d); // rmdir: the kernel refuses (EBUSY) while a process is inside
                    break;
                } catch (IOException e) {
                    if (Instant.now().isAfter(deadline)) {
                        throw new IOException("cannot remove cgroup " + d + ": " + e.getMessage(), e);
                    }
                    try {
                        Thread.sleep(20);
                    } catch (InterruptedException ie) {
                        Thread.currentThread().interrupt();
                        throw new IOException("interrupted removing cgroup " + d, ie);
                    }
                }
            }
        }
    }
}
