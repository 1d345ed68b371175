package io.npmagent.harness.cluster;

import io.npmagent.harness.process.Daemon;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One node of a cluster and every name that is the node's own: its network namespace and the mount
 * namespace beside it (with its bpffs at {@code /sys/fs/bpf} inside), its cgroup2 directory (which holds
 * its processes and is its cgroup2 root inside) and its cgroup v1 root (the kubelet's {@code cgroupRoot}),
 * containerd's state and socket, the kubelet's root directory, its addresses on the underlay. The node steps
 * read names from here only, so several nodes are the same steps run per node. Its pod ranges are not
 * here: kube-controller-manager gives them ({@link Cluster#podCidrs}).
 *
 * <p>Node 0 keeps the names a one-node cluster always had (network namespace NAME, cgroup
 * {@code /sys/fs/cgroup/unified/NAME}, v1 root {@code /NAME}, {@code /run/NAME/containerd}, ...); node
 * {@code i > 0} adds {@code -i} to each and takes the next addresses.
 */
public record Node(int index, String name, String ip, String ipv6, String netns, Path mountNs, Path cgroup, String v1Root,
                   Path containerdDir, Path containerdRun, Path kubeletDir, Path cniDir) {
    /** Where cgroup2 is mounted on the host; the node's cgroup is a directory under it. */
    public static final Path UNIFIED = Path.of("/sys/fs/cgroup/unified");
    /** The underlay's own addresses (its bridge's): every node's gateway; {@code .10 + i} is node i's. */
    public static final String UNDERLAY_V4 = "10.250.0.1";
    public static final String UNDERLAY_V6 = "fd00:10:250::1";

    public static Node of(ClusterConfig c, int index) {
        if (index < 0 || index >= ClusterConfig.MAX_NODES) {
            throw new IllegalArgumentException("node " + index + ": a cluster has 1 to " + ClusterConfig.MAX_NODES + " nodes");
        }
        String suffix = index == 0 ? "" : "-" + index;
        String netns = c.name() + suffix;
        Path run = c.run();
        Path state = c.state();
        String node = index == 0 ? "npm-node" : "npm-node-" + index;
        return new Node(index, node, "10.250.0." + (10 + index), "fd00:10:250::" + (10 + index), netns,
                run.resolve("ns/mnt" + suffix), UNIFIED.resolve(netns), "/" + netns,
                state.resolve("containerd" + suffix), run.resolve("containerd" + suffix), state.resolve("kubelet" + suffix),
                state.resolve("cni" + suffix));
    }

    /** What node {@code i > 0} adds to each of its names; node 0's is empty. */
    public String suffix() {
        return index == 0 ? "" : "-" + index;
    }

    /** Its addresses as the kubelet's {@code --node-ip} takes them: IPv4 first (the API server calls it there). */
    public String nodeIps() {
        return ip + "," + ipv6;
    }

    /** Its end of the underlay: a port of the underlay's bridge, in the underlay's namespace. */
    public String underlayPort() {
        return "node" + index;
    }

    public Path containerdSocket() {
        return containerdRun.resolve("containerd.sock");
    }

    /** The {@code nsenter} options that enter the node: its network and mount namespaces. */
    public List<String> nsenter() {
        return List.of("--net=/run/netns/" + netns, "--mount=" + mountNs);
    }

    /** {@code argv} run inside the node (short-lived: the caller runs it through a process runner). */
    public List<String> inside(List<String> argv) {
        List<String> out = new ArrayList<>();
        out.add("nsenter");
        out.addAll(nsenter());
        out.add("--");
        out.addAll(argv);
        return out;
    }

    /** {@code ctr} on this node's containerd, its Kubernetes namespace, with {@code args}, run inside. */
    public List<String> ctr(List<String> args) {
        List<String> argv = new ArrayList<>(List.of("ctr", "--address", containerdSocket().toString(), "-n", "k8s.io"));
        argv.addAll(args);
        return inside(argv);
    }

    /** A long-running process of the node: in its cgroup (so {@code down} finds it) and namespaces, detached. */
    public Daemon.Spec daemon(String what, Path log, List<String> argv) {
        return Daemon.of(what, log, argv).inCgroup(cgroup).entering(nsenter()).detached();
    }
}
