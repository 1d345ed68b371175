package io.npmagent.harness.cluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * kube-proxy in iptables mode as a process of the node, as kubeadm-less clusters run it; returns once its
 * KUBE-SERVICES chain is in the node's nat table. It leaves the conntrack table's size alone: the node's
 * namespace shares it with the host.
 */
final class KubeProxy implements Step.NodeAction {
    @Override
    public void up(Cluster c, Node node) throws Exception {
        Path config = c.config().state().resolve("kube-proxy" + node.suffix() + ".yaml");
        Files.writeString(config, render(node, c.config().controlPlaneDir().resolve("kube-proxy.kubeconfig")));
        node.daemon("kube-proxy", c.log(node, "kube-proxy"), List.of(c.bin("kube-proxy").toString(), "--config=" + config, "--v=1")).start();
        c.awaitCommand(Duration.ofSeconds(60), "kube-proxy's rules", node.inside(List.of("iptables", "-t", "nat", "-S", "KUBE-SERVICES")));
    }

    static String render(Node node, Path kubeconfig) {
        return """
                apiVersion: kubeproxy.config.k8s.io/v1alpha1
                kind: KubeProxyConfiguration
                clientConnection:
                  kubeconfig: %s
                hostnameOverride: %s
                mode: iptables
                clusterCIDR: %s
                # 0: leave the conntrack table's size alone (the node's namespace shares it with the host).
                conntrack:
                  maxPerCore: 0
                metricsBindAddress: 127.0.0.1:10249
                healthzBindAddress: 127.0.0.1:10256
                """.formatted(kubeconfig, node.name(), ClusterConfig.POD_CIDRS);
    }
}
