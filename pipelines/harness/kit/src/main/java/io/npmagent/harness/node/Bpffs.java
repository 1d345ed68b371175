package io.npmagent.harness.node;

import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.ProcessRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A bpffs of a node's own, for the eBPF backend's pins: never the host's {@code /sys/fs/bpf}. Mounted
 * at a directory the harness names after the node; unmounting it frees every pin below it.
 */
public final class Bpffs {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private Bpffs() {}

    /** Mounts a bpffs at {@code dir} (made if missing); {@code source} names it in /proc/mounts. */
    public static Path mount(Path dir, String source) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new IllegalStateException("cannot make " + dir + ": " + e.getMessage(), e);
        }
        run("mount", "-t", "bpf", source, dir.toString());
        return dir;
    }

    /** Unmounts it and removes the directory; one not mounted is no error. */
    public static void unmount(Path dir) {
        ProcessRunner.host().run(List.of("umount", dir.toString()), "", TIMEOUT);
        ProcessRunner.host().run(List.of("rmdir", dir.toString()), "", TIMEOUT);
    }

    private static void run(String... argv) {
        CommandResult r = ProcessRunner.host().run(List.of(argv), "", TIMEOUT);
        if (!r.ok()) {
            throw new IllegalStateException(String.join(" ", argv) + ": " + r.errorSummary());
        }
    }
}
