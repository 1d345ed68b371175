package io.npmagent.harness.cluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The node's containerd (Debian's, with runc): its root under the cluster's state, its state and socket
 * under /run/NAME, pods' network namespaces under its state directory (not the host's /run/netns), the
 * CNI plugins from the upstream binaries and the node's {@link CniConfig}, written later by the pod network.
 */
final class Containerd implements Step.NodeAction {
    @Override
    public void up(Cluster c, Node node) throws Exception {
        Files.createDirectories(node.containerdDir());
        Files.createDirectories(node.containerdRun());
        // Empty until the pod network writes its configuration; containerd watches it.
        Files.createDirectories(node.cniDir().resolve("net.d"));
        Path config = node.containerdDir().resolve("config.toml");
        Files.writeString(config, render(node, c.bin(), c.images().pause()));
        node.daemon("containerd", c.log(node, "containerd"), List.of("containerd", "--config", config.toString())).start();
        c.awaitCommand(Duration.ofSeconds(60), "containerd", node.ctr(List.of("version")));
    }

    static String render(Node node, Path bin, String pauseImage) {
        Path sock = node.containerdSocket();
        return """
                version = 2
                root = "%s"
                state = "%s"
                [grpc]
                  address = "%s"
                [ttrpc]
                  address = "%s.ttrpc"
                [plugins."io.containerd.internal.v1.opt"]
                  path = "%s"
                [plugins."io.containerd.grpc.v1.cri"]
                  sandbox_image = "%s"
                  # Pod network namespaces under the state directory, not the host's /run/netns.
                  netns_mounts_under_state_dir = true
                  # This VM's root lacks CAP_SYS_RESOURCE, so no process may lower its OOM score (the pause container's
                  # -998, a critical pod's -997): keep every score at or above containerd's own, as rootless setups do.
                  restrict_oom_score_adj = true
                  [plugins."io.containerd.grpc.v1.cri".cni]
                    bin_dir = "%s"
                    conf_dir = "%s"
                  [plugins."io.containerd.grpc.v1.cri".containerd]
                    snapshotter = "overlayfs"
                    default_runtime_name = "runc"
                    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
                      runtime_type = "io.containerd.runc.v2"
                """.formatted(node.containerdDir().resolve("root"), node.containerdRun().resolve("state"), sock, sock,
                node.containerdDir().resolve("opt"), pauseImage, bin.resolve("cni"), node.cniDir().resolve("net.d"));
    }
}
