package io.npmagent.harness.sandbox;

import io.npmagent.harness.node.NetworkNamespace;
import io.npmagent.harness.node.PodLink;
import java.util.List;

/**
 * What joins a sandbox's nodes, when it has more than one: a namespace of its own ({@link
 * Sandbox#underlayNetns}) holding a bridge with one port per node, each node's {@code eth0} on it
 * ({@code 10.249.1.(i+1)/24}, {@code fd49:1::(i+1)/64}), and in every node a route to each other node's
 * addresses and to each of its pods via that node's underlay address, as a host-gw pod network routes
 * (kube-router, kindnetd, flannel's host-gw): a packet between pods on two nodes leaves one node's
 * namespace by {@code eth0} and enters the other's, unchanged, so each agent judges it with the pod's own
 * address. The bridge forwards nothing else: the nodes reach each other and no further.
 */
final class SandboxUnderlay {
    static final String BRIDGE = "br0";

    private SandboxUnderlay() {}

    /** The underlay and the routes between the nodes' own addresses; nothing for a single node. */
    static void up(Sandbox sandbox, List<SandboxNode> nodes) {
        if (nodes.size() < 2) {
            return;
        }
        NetworkNamespace underlay = NetworkNamespace.create(sandbox.underlayNetns());
        underlay.must("ip", "link", "add", BRIDGE, "type", "bridge");
        underlay.must("ip", "link", "set", BRIDGE, "up");
        for (SandboxNode node : nodes) {
            PodLink.bridged(underlay, "node" + node.index(), BRIDGE, node.namespace(),
                    List.of(node.underlayV4() + "/24", node.underlayV6() + "/64"), List.of());
        }
        for (SandboxNode node : nodes) {
            for (SandboxNode other : nodes) {
                if (other != node) {
                    route(node, "replace", other.ipv4(), other);
                    route(node, "replace", other.ipv6(), other);
                }
            }
        }
    }

    /** Routes a pod's addresses on every node but its own via its node's underlay address. */
    static void addPod(List<SandboxNode> nodes, SandboxNode home, List<String> ips) {
        for (SandboxNode node : nodes) {
            if (!node.equals(home)) {
                ips.forEach(ip -> route(node, "replace", ip, home));
            }
        }
    }

    /** Removes what {@link #addPod} routed; a route already gone is no error. */
    static void removePod(List<SandboxNode> nodes, SandboxNode home, List<String> ips) {
        for (SandboxNode node : nodes) {
            if (!node.equals(home)) {
                ips.forEach(ip -> node.namespace().run("ip", family(ip), "route", "del", host(ip), "via", home.underlayFor(ip)));
            }
        }
    }

    private static void route(SandboxNode on, String verb, String ip, SandboxNode via) {
        on.namespace().must("ip", family(ip), "route", verb, host(ip), "via", via.underlayFor(ip), "dev", SandboxNode.UNDERLAY_DEVICE);
    }

    private static String family(String ip) {
        return ip.contains(":") ? "-6" : "-4";
    }

    private static String host(String ip) {
        return ip + (ip.contains(":") ? "/128" : "/32");
    }
}
