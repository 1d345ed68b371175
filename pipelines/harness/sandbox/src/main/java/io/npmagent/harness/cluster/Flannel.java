package io.npmagent.harness.cluster;

import io.npmagent.harness.controlplane.KubeBinaries;
import io.npmagent.harness.process.Await;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The {@code vxlan} pod network: flanneld (built from its Go module, {@code pipelines/kube-binaries flanneld})
 * on each node with {@code --kube-subnet-mgr}, dual stack, the vxlan backend over eth0. It takes the node's
 * ranges from kube-controller-manager, writes its {@code subnet.env}, and routes the other nodes' ranges
 * through {@code flannel.1} and {@code flannel-v6.1}. Flannel's CNI plugin module is not served, so the
 * bridge configuration is written here as that plugin would delegate it, from the node's ranges and
 * {@code subnet.env}'s MTU.
 *
 * <p>No masquerade ({@code --ip-masq=false}, bridge {@code ipMasq: false}) and no FORWARD rules of its own
 * ({@code --iptables-forward-rules=false}: flannel's default appends an ACCEPT for the whole pod network to
 * FORWARD, which would admit what a policy backend's later rules should judge). Its identity is a user
 * {@code flannel} with the RBAC of upstream's manifest ({@code cluster-manifests/flannel-rbac.yaml}).
 */
final class Flannel implements Step.NodeAction {
    static final String NET_CONF = """
            {
              "Network": "10.244.0.0/16",
              "EnableIPv4": true,
              "IPv6Network": "fd00:10:244::/56",
              "EnableIPv6": true,
              "Backend": {"Type": "vxlan", "VNI": 1, "Port": 8472}
            }
            """;
    /**
     * What the IPv6 tunnel costs beyond the IPv4 one: flannel writes eth0's MTU less 50 (an IPv4 VXLAN
     * header) for both families, but {@code flannel-v6.1} over the IPv6 underlay gets 20 less; a pod's
     * IPv6 packets between the two would be dropped with Packet Too Big.
     */
    static final int IPV6_TUNNEL_EXTRA = 20;

    @Override
    public void up(Cluster c, Node node) throws Exception {
        Path dir = Files.createDirectories(c.config().state().resolve("flannel" + node.suffix()));
        Path netConf = c.config().state().resolve("flannel-net-conf.json");
        Files.writeString(netConf, NET_CONF);
        if (node.index() == 0) {
            c.kubectl("apply", "-f", c.checkout().resolve("pipelines/cluster-manifests/flannel-rbac.yaml").toString());
        }
        Path subnetEnv = dir.resolve("subnet.env");
        node.daemon("flanneld", c.log(node, "flanneld"), List.of(KubeBinaries.onRequest("flanneld").toString(), "--kube-subnet-mgr",
                        "--kubeconfig-file=" + c.config().controlPlaneDir().resolve("flannel.kubeconfig"), "--iface=eth0",
                        "--ip-masq=false", "--iptables-forward-rules=false", "--subnet-file=" + subnetEnv, "--net-config-path=" + netConf))
                .env("NODE_NAME", node.name())
                .start();
        Map<String, String> env = Await.value(Duration.ofSeconds(60), "flanneld's " + subnetEnv, () -> read(subnetEnv),
                () -> "its log: " + c.log(node, "flanneld"));
        Files.writeString(node.cniDir().resolve("net.d/10-bridge.conflist"),
                CniConfig.render(c.config().name(), node, c.podCidrs(node), mtu(env)));
        Kubelet.awaitReady(c, node);
    }

    /** The pods' MTU: flannel's, less what the IPv6 tunnel costs more, so one MTU fits both families. */
    static int mtu(Map<String, String> subnetEnv) {
        return Integer.parseInt(subnetEnv.get("FLANNEL_MTU")) - IPV6_TUNNEL_EXTRA;
    }

    /** {@code subnet.env}'s variables once flanneld has written it (it renames a whole file into place). */
    static java.util.Optional<Map<String, String>> read(Path subnetEnv) {
        try {
            return java.util.Optional.of(parse(Files.readString(subnetEnv)));
        } catch (IOException e) {
            return java.util.Optional.empty();
        }
    }

    static Map<String, String> parse(String subnetEnv) {
        return subnetEnv.lines().map(String::strip).filter(l -> l.contains("=")).collect(Collectors.toMap(
                l -> l.substring(0, l.indexOf('=')), l -> l.substring(l.indexOf('=') + 1), (a, b) -> b));
    }
}
