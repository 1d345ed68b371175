package io.npmagent.harness.cluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The {@code host-gw} pod network, as kind's kindnetd makes it: the bridge CNI configuration over the
 * node's pod ranges (from kube-controller-manager), and on each node a route keeper ({@link PodRoutesMain})
 * that routes every other node's pod ranges via that node's address on the underlay, kept in step with
 * the Node objects. No encapsulation, no masquerade: a packet between pods on two nodes crosses the
 * underlay with both pods' addresses. Returns when the node is Ready.
 */
final class HostGw implements Step.NodeAction {
    /** The underlay's MTU: a veth's default. */
    static final int MTU = 1500;

    @Override
    public void up(Cluster c, Node node) throws Exception {
        Path conf = node.cniDir().resolve("net.d/10-bridge.conflist");
        Files.writeString(conf, CniConfig.render(c.config().name(), node, c.podCidrs(node), MTU));
        String java = ProcessHandle.current().info().command().orElse("java");
        node.daemon("pod-routes", c.log(node, "pod-routes"), List.of(java, "-Xmx64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), PodRoutesMain.class.getName(), "--node", node.name(),
                "--kubeconfig", c.config().controlPlaneDir().resolve("kube-proxy.kubeconfig").toString())).start();
        Kubelet.awaitReady(c, node);
    }
}
