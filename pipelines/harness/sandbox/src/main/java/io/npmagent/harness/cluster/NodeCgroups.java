package io.npmagent.harness.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The node's cgroup v1 root ({@code /NAME} in every v1 hierarchy, the kubelet's {@code cgroupRoot}), with
 * cpuset's cpus and mems copied from the parent, as a new cpuset needs before a task may join it.
 *
 * <p>This VM has cgroup v1 (cgroup2 only at /sys/fs/cgroup/unified, with no controllers). Kubernetes v1.34
 * is the last minor whose kubelet starts on cgroup v1 by default, so the pin stays there and the kubelet
 * config says {@code failCgroupV1: false}. Pods' cgroups live at
 * {@code /sys/fs/cgroup/<controller>/NAME/kubepods[/burstable|/besteffort]/pod<UID>/<container id>}.
 */
final class NodeCgroups implements Step.NodeAction {
    @Override
    public void up(Cluster c, Node node) throws IOException {
        for (Path h : v1Hierarchies()) {
            Path root = h.resolve(node.v1Root().substring(1));
            Files.createDirectories(root);
            if (Files.exists(h.resolve("cpuset.cpus"))) {
                Files.writeString(root.resolve("cpuset.cpus"), Files.readString(h.resolve("cpuset.cpus")));
                Files.writeString(root.resolve("cpuset.mems"), Files.readString(h.resolve("cpuset.mems")));
            }
        }
    }

    /** Every cgroup v1 hierarchy's mount point. */
    static List<Path> v1Hierarchies() throws IOException {
        return v1Hierarchies(Files.readString(Path.of("/proc/self/mounts")));
    }

    static List<Path> v1Hierarchies(String mounts) {
        return mounts.lines().map(l -> l.split(" ")).filter(f -> f.length > 2 && f[2].equals("cgroup")).map(f -> Path.of(f[1])).toList();
    }
}
