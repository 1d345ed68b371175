package io.npmagent.harness.cluster;

import io.npmagent.harness.node.NetworkNamespace;
import io.npmagent.harness.node.PodLink;
import java.util.List;

/**
 * The wire between the nodes: a bridge ({@code br0}) in a network namespace of its own
 * ({@link ClusterConfig#underlayNetns}), every node's eth0 a port of it ({@link NodeNamespaces}), as the
 * nodes of a kind cluster share a Docker network. It has the nodes' gateway addresses
 * ({@link Node#UNDERLAY_V4}, {@link Node#UNDERLAY_V6}) and forwards nothing: a node reaches the other
 * nodes and nothing else, so a packet that would leave the cluster goes nowhere, never to the host.
 */
final class Underlay implements Step.ClusterAction {
    static final String BRIDGE = "br0";

    @Override
    public void up(Cluster c) {
        NetworkNamespace ns = NetworkNamespace.create(c.config().underlayNetns());
        PodLink.bridge(ns, BRIDGE, List.of(Node.UNDERLAY_V4 + "/24", Node.UNDERLAY_V6 + "/64"));
    }
}
