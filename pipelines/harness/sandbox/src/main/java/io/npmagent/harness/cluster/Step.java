package io.npmagent.harness.cluster;

import java.util.List;

/**
 * One step of bringing a cluster up, as kind's create actions are: small, ordered, each testable, each
 * named for the progress line. A node's step ({@link NodeAction}) runs once per node ({@link #perNode}),
 * so more nodes are the same steps again.
 */
public record Step(String what, ClusterAction action) {
    /** A step of the cluster as a whole (the control plane, an add-on). */
    @FunctionalInterface
    public interface ClusterAction {
        void up(Cluster cluster) throws Exception;
    }

    /** A step of one node. */
    @FunctionalInterface
    public interface NodeAction {
        void up(Cluster cluster, Node node) throws Exception;
    }

    public void up(Cluster cluster) throws Exception {
        action.up(cluster);
    }

    /** {@code action} on every node of the cluster, in order. */
    static Step perNode(String what, NodeAction action) {
        return new Step(what, cluster -> {
            for (Node n : cluster.nodes()) {
                action.up(cluster, n);
            }
        });
    }

    /**
     * The steps of {@code up}, in order: the underlay and the nodes, the control plane, each node's runtime
     * and kubelet, the pod network, then the cluster's add-ons.
     */
    static List<Step> create(PodNetwork network) {
        return List.of(
                new Step("underlay", new Underlay()),
                perNode("network and mount namespaces", new NodeNamespaces()),
                perNode("cgroup roots", new NodeCgroups()),
                new Step("control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler)", new ControlPlaneStep()),
                new Step("the API server's bridge to the host", new ApiServerBridge()),
                perNode("containerd", new Containerd()),
                perNode("images", new Images()),
                perNode("kubelet", new Kubelet()),
                perNode("pod network (" + network + ")", network.step()),
                perNode("kube-proxy", new KubeProxy()),
                new Step("CoreDNS", new CoreDns()));
    }
}
