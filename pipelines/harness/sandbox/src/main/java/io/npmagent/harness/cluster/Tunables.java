package io.npmagent.harness.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The host's kernel tunables the kubelet sets (kernel.panic, vm.overcommit_memory, ...): saved to
 * {@code STATE/tunables} before the first kubelet starts, put back by {@code down}. Two clusters side
 * by side share them.
 */
final class Tunables {
    static final List<String> KEYS = List.of("vm.overcommit_memory", "vm.panic_on_oom", "kernel.panic", "kernel.panic_on_oops",
            "kernel.keys.root_maxkeys", "kernel.keys.root_maxbytes");

    private Tunables() {}

    static void save(Cluster c) throws IOException {
        Path file = c.config().state().resolve("tunables");
        if (Files.exists(file)) {
            return;
        }
        List<String> lines = new ArrayList<>();
        for (String k : KEYS) {
            lines.add(k + "=" + c.must("sysctl", "-n", k).stdout().strip());
        }
        Files.write(file, lines);
    }

    static void restore(Cluster c) throws IOException {
        Path file = c.config().state().resolve("tunables");
        if (!Files.exists(file)) {
            return;
        }
        for (String line : Files.readAllLines(file)) {
            if (!line.isBlank() && !c.run(List.of("sysctl", "-q", "-w", line)).ok()) {
                Cluster.log("could not restore " + line);
            }
        }
        Files.delete(file);
    }
}
