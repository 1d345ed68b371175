package io.npmagent.harness.process;

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
 * Processes in cgroup2 directories of the harness's own: where the hierarchy is, a command that starts
 * inside one (a pod's processes, so their sockets are the pod's; a node's daemons, so the node's are
 * found and stopped by theirs), and removing a tree of them once its processes are gone.
 */
public final class Cgroups {
    private static final Path MOUNTS = Path.of("/proc/self/mounts");

    private Cgroups() {}

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

    public static void create(Path cgroup) throws IOException {
        Files.createDirectories(cgroup);
    }

    /**
     * {@code argv} run inside {@code cgroup}: a shell moves itself there, then becomes the command. The
     * path and the command are arguments of the shell, never part of its script.
     */
    public static List<String> inside(Path cgroup, List<String> argv) {
        List<String> out = new ArrayList<>(List.of("sh", "-c", "echo $$ > \"$0/cgroup.procs\" && exec \"$@\"", cgroup.toString()));
        out.addAll(argv);
        return out;
    }

    /**
     * Removes {@code cgroup} and the cgroups below it, deepest first, once their processes are gone
     * (the caller has killed them; the kernel takes a moment to empty a cgroup). A cgroup that still
     * has processes after {@code wait} is left, and named in the exception.
     */
    public static void remove(Path cgroup, Duration wait) throws IOException {
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
