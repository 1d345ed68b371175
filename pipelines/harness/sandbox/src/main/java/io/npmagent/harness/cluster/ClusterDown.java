package io.npmagent.harness.cluster;

import io.npmagent.harness.node.NetworkNamespace;
import io.npmagent.harness.process.Await;
import io.npmagent.harness.process.Cgroups;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * {@code down}: everything a cluster made goes, including what a killed {@code up} left, on as many nodes
 * as a cluster may have ({@link ClusterConfig#MAX_NODES}), whatever {@code up} made. Per node: its
 * processes (every one sits in the node's cgroup: containerd, shims, kubelet, the control plane, the
 * bridge), then whatever its pods run (in its cgroup v1 root), then those cgroups, its mount namespace and
 * its network namespace; then the underlay's namespace, the host's tunables, the state and run directories. containerd's snapshots
 * are overlay mounts in the node's mount namespace, gone with it. It ends by checking that nothing is
 * left, and says what is.
 */
final class ClusterDown {
    private ClusterDown() {}

    static void down(Cluster c) throws IOException {
        List<Path> v1 = NodeCgroups.v1Hierarchies();
        for (Node node : c.nodes()) {
            stop(node, v1);
        }
        Tunables.restore(c);
        for (Node node : c.nodes()) {
            if (Files.exists(node.mountNs())) {
                c.run(List.of("umount", node.mountNs().toString()));
            }
            NetworkNamespace.existing(node.netns()).close();
        }
        NetworkNamespace.existing(c.config().underlayNetns()).close();
        Path nsDir = c.first().mountNs().getParent();
        if (c.run(List.of("mountpoint", "-q", nsDir.toString())).ok()) {
            c.must("umount", nsDir.toString());
        }
        c.run(List.of("rm", "-rf", c.config().state().toString(), c.config().run().toString()));
        List<String> left = leftBehind(c, v1);
        if (!left.isEmpty()) {
            throw new IllegalStateException("down left behind: " + String.join(", ", left));
        }
        Cluster.log("down: nothing left behind");
    }

    private static void stop(Node node, List<Path> v1) throws IOException {
        Path cg = node.cgroup();
        if (Files.isDirectory(cg)) {
            try {
                Files.writeString(cg.resolve("cgroup.kill"), "1");
            } catch (IOException e) {
                for (String pid : Files.readAllLines(cg.resolve("cgroup.procs"))) {
                    ProcessHandle.of(Long.parseLong(pid.strip())).ifPresent(ProcessHandle::destroyForcibly);
                }
            }
            try {
                Await.until(Duration.ofSeconds(5), "the processes of " + cg, () -> readOrEmpty(cg.resolve("cgroup.procs")).isBlank());
            } catch (Await.TimedOut e) {
                Cluster.log(e.getMessage());
            }
        }
        for (Path h : v1) {
            Path root = h.resolve(node.v1Root().substring(1));
            if (Files.isDirectory(root)) {
                try (Stream<Path> tasks = Files.walk(root)) {
                    tasks.filter(p -> p.getFileName().toString().equals("tasks")).flatMap(p -> readOrEmpty(p).lines())
                            .filter(s -> !s.isBlank()).forEach(pid -> ProcessHandle.of(Long.parseLong(pid.strip())).ifPresent(ProcessHandle::destroyForcibly));
                }
            }
        }
        Await.sleep(Duration.ofMillis(200));
        for (Path h : v1) {
            removeTree(h.resolve(node.v1Root().substring(1)));
        }
        removeTree(cg);
    }

    /** Removes a cgroup tree; one still busy after a while is left for {@link #leftBehind} to name. */
    private static void removeTree(Path cgroup) {
        try {
            Cgroups.remove(cgroup, Duration.ofSeconds(2));
        } catch (IOException e) {
            Cluster.log(e.getMessage());
        }
    }

    private static String readOrEmpty(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            return "";
        }
    }

    private static List<String> leftBehind(Cluster c, List<Path> v1) {
        List<String> left = new ArrayList<>();
        for (Node node : c.nodes()) {
            if (NetworkNamespace.exists(node.netns())) {
                left.add("network namespace " + node.netns());
            }
            for (Path h : v1) {
                Path root = h.resolve(node.v1Root().substring(1));
                if (Files.isDirectory(root)) {
                    left.add(root.toString());
                }
            }
            if (Files.isDirectory(node.cgroup())) {
                left.add(node.cgroup().toString());
            }
        }
        if (NetworkNamespace.exists(c.config().underlayNetns())) {
            left.add("network namespace " + c.config().underlayNetns());
        }
        String state = c.config().state().toString();
        List<String> pids = ProcessHandle.allProcesses().filter(p -> p.info().commandLine().map(l -> l.contains(state)).orElse(false))
                .filter(p -> p.pid() != ProcessHandle.current().pid()).map(p -> Long.toString(p.pid())).toList();
        if (!pids.isEmpty()) {
            left.add("processes: " + String.join(" ", pids));
        }
        return left;
    }
}
