package io.npmagent.harness.cluster;

import io.npmagent.harness.node.NetworkNamespace;
import io.npmagent.harness.node.PodLink;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The node's network namespace and its mount namespace. The network namespace holds eth0 (the node's
 * addresses, IPv4 and IPv6, on the {@link Underlay}, and default routes via the underlay's, as a node
 * has: a Service's ClusterIP needs a route before kube-proxy's DNAT can send it anywhere; the underlay
 * forwards nothing, so the node reaches the other nodes and no further), the CNI bridge and the pods' veths,
 * kube-proxy's and the agent's netfilter rules and eBPF hooks. Bridged IPv4/IPv6 goes to netfilter, as
 * kubeadm's preflight requires (per namespace since Linux 5.3).
 *
 * <p>The mount namespace is private to the host: a sysfs of the node's network namespace (so
 * {@code /sys/class/net} is the node's) with the host's cgroup hierarchies moved onto it, the node's own
 * cgroup directory as its cgroup2 root ({@code /sys/fs/cgroup/unified}: what the DaemonSet's CgroupRoot
 * links its programs at is this node's, never the host's), a bpffs of its own at {@code /sys/fs/bpf} (the
 * DaemonSet's pin directory), then shared within, so the kubelet's mount propagation (the DaemonSet's
 * bpffs mount is HostToContainer) works.
 */
final class NodeNamespaces implements Step.NodeAction {
    /** The mount namespace's set-up, run inside it; $0 is where the host's cgroups are held, $1 the node's cgroup. */
    static final String MOUNTS = String.join("\n",
            "mount --rbind /sys/fs/cgroup \"$0\"",
            "mount -t sysfs sysfs /sys",
            "mount --move \"$0\" /sys/fs/cgroup",
            "mount --bind \"$1\" /sys/fs/cgroup/unified",
            "mount -t bpf bpf /sys/fs/bpf",
            "mount --make-rshared /");

    @Override
    public void up(Cluster c, Node node) throws Exception {
        NetworkNamespace ns = NetworkNamespace.create(node.netns());
        PodLink.bridged(NetworkNamespace.existing(c.config().underlayNetns()), node.underlayPort(), Underlay.BRIDGE, ns,
                List.of(node.ip() + "/24", node.ipv6() + "/64"), List.of(Node.UNDERLAY_V4, Node.UNDERLAY_V6));
        ns.forwarding();
        ns.must("sysctl", "-q", "-w", "net.bridge.bridge-nf-call-iptables=1", "net.bridge.bridge-nf-call-ip6tables=1");

        // The file that holds the mount namespace lives on a private mount, as ip netns keeps its own.
        Path nsDir = node.mountNs().getParent();
        Path hold = c.config().run().resolve("cgroup-hold" + node.suffix());
        Files.createDirectories(nsDir);
        Files.createDirectories(hold);
        if (!c.run(List.of("mountpoint", "-q", nsDir.toString())).ok()) {
            c.must("mount", "--bind", nsDir.toString(), nsDir.toString());
            c.must("mount", "--make-private", nsDir.toString());
        }
        if (!Files.exists(node.mountNs())) {
            Files.createFile(node.mountNs());
        }
        Files.createDirectories(node.cgroup());
        c.must("unshare", "--mount=" + node.mountNs(), "--propagation", "private", "--",
                "nsenter", "--net=/run/netns/" + node.netns(), "--",
                "sh", "-ec", MOUNTS, hold.toString(), node.cgroup().toString());
    }
}
