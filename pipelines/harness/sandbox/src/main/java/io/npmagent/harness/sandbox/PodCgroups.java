package io.npmagent.harness.sandbox;

import io.npmagent.harness.process.Cgroups;
import java.nio.file.Path;

/**
 * The sandbox's cgroups, as a container runtime gives pods theirs: one cgroup2 directory per node of the
 * sandbox ({@code npm-agent-sandbox-<name>} for node 0, {@code npm-agent-sandbox-<name>.node<i>} for
 * node i, at the top of the cgroup2 hierarchy, {@code /sys/fs/cgroup/unified} on a hybrid host,
 * {@code /sys/fs/cgroup} on a cgroup2-only one) and one below its node's per pod, named as its network
 * namespace ({@code p<n>}). Every process of a pod (its server,
 * the prober's clients, {@code sandbox exec}) starts inside its pod's cgroup, before it opens a socket
 * (a socket belongs to the cgroup its process was in when it was made). A node's agent's
 * {@code --cgroup-root} is its node's cgroup, so what it attaches there sees every pod of its node and
 * nothing else.
 * Making, entering and removing them is {@link Cgroups}'.
 */
public final class PodCgroups {
    private PodCgroups() {}

    /** The name of node 0's cgroup; node i's adds {@code .node<i>} (sandbox names hold no dot, so no two sandboxes share one). */
    static String name(Sandbox sandbox) {
        return "npm-agent-sandbox-" + sandbox.name();
    }

    /** The cgroup2 directory {@code name} at the top of the hierarchy (not created here). */
    static Path at(String name) {
        Path mount = Cgroups.cgroup2Mount().orElseThrow(() -> new IllegalStateException(
                "no cgroup2 hierarchy is mounted (/proc/self/mounts): the sandbox's pods need cgroups of their own"));
        return mount.resolve(name);
    }

    /** A pod's cgroup: its network namespace's index under the sandbox's. */
    static Path ofPod(Path sandboxCgroup, int index) {
        return sandboxCgroup.resolve("p" + index);
    }
}
