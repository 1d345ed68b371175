package io.npmagent.harness.cluster;

import java.util.List;

/**
 * One step of bringing a cluster up, as kind's create actions are: small, ordered, each testable. A
 * {@link NodeStep} is run once per node ({@link #perNode}), so more nodes are the same steps again.
 */
public interface Step {
    /** What it brings up, for the progress line. */
    String what();

    void up(Cluster cluster) throws Exception;

    /** A step of one node. */
    interface NodeStep {
        String what();

        void up(Cluster cluster, Node node) throws Exception;
    }

    /** {@code step} on every node of the cluster, in order. */
    static Step perNode(NodeStep step) {
        return new Step() {
            @Override
            public String what() {
                return step.what();
            }

            @Override
            public void up(Cluster cluster) throws Exception {
                for (Node n : cluster.nodes()) {
                    step.up(cluster, n);
                }
            }
        };
    }

    /** The steps of {@code up}, in order: the node, the control plane, the node's runtime and kubelet, then the cluster's add-ons. */
    static List<Step> create() {
        return List.of(
                perNode(new NodeNamespaces()),
                perNode(new NodeCgroups()),
                new ControlPlaneStep(),
                new ApiServerBridge(),
                perNode(new CniConfig()),
                perNode(new Containerd()),
                perNode(new Images()),
                perNode(new Kubelet()),
                perNode(new KubeProxy()),
                new CoreDns());
    }
}
