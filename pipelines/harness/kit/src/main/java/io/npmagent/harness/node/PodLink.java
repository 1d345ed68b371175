package io.npmagent.harness.node;

import io.npmagent.dataplane.model.IpAddress;
import java.util.List;

/**
 * A pod's link to its node: the one place a veth pair is made, and the two ways a pod network lays one
 * out. {@link #routed}, as Calico does: the pod's addresses as /32 and /128 on {@code eth0}, everything
 * routed via {@code 169.254.1.1} and {@code fe80::1}, which every node-side veth carries, and a route in
 * the node to each address (or to a remote node's prefix) through the veth. {@link #bridged}, as the CNI
 * bridge plugin does: the veth a port of the node's bridge (hairpin on, as the plugin's
 * {@code hairpinMode}), the pod's addresses in the bridge's subnets, its default routes via the bridge's
 * addresses. {@link #placeholders}: pods the scale pipeline counts but never sends from, veth pairs
 * with both ends in the node.
 */
public final class PodLink {
    /** The node's address on every routed veth, the pods' IPv4 gateway. */
    public static final String GATEWAY_V4 = "169.254.1.1";
    /** The node's link-local address on every routed veth, the pods' IPv6 gateway. */
    public static final String GATEWAY_V6 = "fe80::1";

    private PodLink() {}

    /** A veth pair: {@code nodeSide} in {@code node}, {@code podSide} in {@code pod}, both down. */
    public static void veth(NetworkNamespace node, String nodeSide, NetworkNamespace pod, String podSide) {
        NetworkNamespace.host("ip", "link", "add", nodeSide, "netns", node.name(), "type", "veth", "peer", "name", podSide, "netns", pod.name());
    }

    /** A veth pair with both ends in {@code ns} ({@code a} and {@code b}), both up: an interface to attach to, with no pod behind it. */
    public static void vethWithin(NetworkNamespace ns, String a, String b) {
        ns.must("ip", "link", "add", a, "type", "veth", "peer", "name", b);
        ns.must("ip", "link", "set", a, "up");
        ns.must("ip", "link", "set", b, "up");
    }

    /**
     * The routed layout on a new veth pair ({@code nodeSide}, and {@code eth0} in the pod): the pod's
     * {@code ips}, its default routes through the node, and a route in the node to each of {@code nodeRoutes}
     * (a prefix, or an address) through the veth.
     */
    public static void routed(NetworkNamespace node, String nodeSide, NetworkNamespace pod, List<IpAddress> ips, List<String> nodeRoutes) {
        veth(node, nodeSide, pod, "eth0");
        boolean v4 = ips.stream().anyMatch(ip -> !ip.v6());
        boolean v6 = ips.stream().anyMatch(IpAddress::v6);
        for (IpAddress ip : ips) {
            if (ip.v6()) {
                pod.must("ip", "-6", "addr", "add", ip + "/128", "dev", "eth0", "nodad");
            } else {
                pod.must("ip", "addr", "add", ip + "/32", "dev", "eth0");
            }
        }
        pod.must("ip", "link", "set", "eth0", "up");
        node.must("sysctl", "-qw", "net.ipv6.conf." + nodeSide + ".accept_dad=0");
        node.must("ip", "addr", "add", GATEWAY_V4 + "/32", "dev", nodeSide);
        node.must("ip", "-6", "addr", "add", GATEWAY_V6 + "/64", "dev", nodeSide, "nodad");
        node.must("ip", "link", "set", nodeSide, "up");
        if (v4) {
            pod.must("ip", "route", "add", GATEWAY_V4, "dev", "eth0", "scope", "link");
            pod.must("ip", "route", "add", "default", "via", GATEWAY_V4, "dev", "eth0");
        }
        if (v6) {
            pod.must("ip", "-6", "route", "add", "default", "via", GATEWAY_V6, "dev", "eth0");
        }
        for (String route : nodeRoutes) {
            node.must("ip", route.contains(":") ? "-6" : "-4", "route", "add", route, "dev", nodeSide);
        }
    }

    /** {@link #routed} with a host route in the node to each of the pod's addresses. */
    public static void routed(NetworkNamespace node, String nodeSide, NetworkNamespace pod, List<IpAddress> ips) {
        routed(node, nodeSide, pod, ips, ips.stream().map(ip -> ip + "/" + ip.bitLength()).toList());
    }

    /**
     * The bridged layout on a new veth pair: {@code nodeSide} a port of {@code bridge} (which exists in the
     * node), the pod's {@code addresses} ({@code ip/prefix}, the bridge's subnets) on {@code eth0}, and its
     * default routes via {@code gateways} (the bridge's addresses).
     */
    public static void bridged(NetworkNamespace node, String nodeSide, String bridge, NetworkNamespace pod, List<String> addresses,
            List<String> gateways) {
        veth(node, nodeSide, pod, "eth0");
        for (String a : addresses) {
            if (a.contains(":")) {
                pod.must("ip", "-6", "addr", "add", a, "dev", "eth0", "nodad");
            } else {
                pod.must("ip", "addr", "add", a, "dev", "eth0");
            }
        }
        pod.must("ip", "link", "set", "eth0", "up");
        for (String g : gateways) {
            pod.must("ip", g.contains(":") ? "-6" : "-4", "route", "add", "default", "via", g, "dev", "eth0");
        }
        node.must("ip", "link", "set", nodeSide, "master", bridge);
        // hairpin: a frame may leave by the port it came in from (a pod reaching itself through its Service).
        node.must("ip", "link", "set", nodeSide, "type", "bridge_slave", "hairpin", "on");
        node.must("ip", "link", "set", nodeSide, "up");
    }

    /**
     * A bridge in {@code node} with the given addresses ({@code ip/prefix}), handing bridged packets to
     * netfilter (br_netfilter), as kube-proxy requires of a bridged pod network.
     */
    public static void bridge(NetworkNamespace node, String bridge, List<String> addresses) {
        node.must("ip", "link", "add", bridge, "type", "bridge");
        node.must("sysctl", "-qw", "net.ipv6.conf." + bridge + ".accept_dad=0",
                "net.bridge.bridge-nf-call-iptables=1", "net.bridge.bridge-nf-call-ip6tables=1");
        for (String a : addresses) {
            if (a.contains(":")) {
                node.must("ip", "-6", "addr", "add", a, "dev", bridge, "nodad");
            } else {
                node.must("ip", "addr", "add", a, "dev", bridge);
            }
        }
        node.must("ip", "link", "set", bridge, "up");
    }

    /**
     * Placeholder pods: per address, a veth pair with both ends in the node ({@code <prefix>p<k>} and
     * {@code <prefix>q<k>}) and a host route to the address through it, in one {@code ip -batch}, so
     * thousands take seconds. Nothing answers there: they give the agent interfaces to attach to.
     */
    public static void placeholders(NetworkNamespace node, String prefix, List<String> ips) {
        StringBuilder batch = new StringBuilder();
        for (int k = 0; k < ips.size(); k++) {
            String p = prefix + "p" + k;
            String q = prefix + "q" + k;
            batch.append("link add ").append(p).append(" type veth peer name ").append(q).append('\n');
            batch.append("link set ").append(p).append(" up\n");
            batch.append("link set ").append(q).append(" up\n");
            batch.append("route add ").append(ips.get(k)).append("/32 dev ").append(p).append('\n');
        }
        node.mustWithInput(batch.toString(), "ip", "-batch", "-");
    }
}
