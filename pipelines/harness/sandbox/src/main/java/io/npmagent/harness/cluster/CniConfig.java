package io.npmagent.harness.cluster;

import java.util.List;
import java.util.stream.Collectors;

/**
 * The node's CNI configuration, which containerd reads: upstream's bridge plugin on {@code cni0} (gateway,
 * hairpin; no masquerade: a pod's packets reach pods on other nodes with the pod's own source address,
 * which podSelector rules judge) with host-local addresses from the node's pod ranges, IPv4 and IPv6, and
 * portmap. The pod network writes it ({@link HostGw}) once it knows the ranges and the MTU.
 */
final class CniConfig {
    private CniConfig() {}

    static String render(String network, Node node, List<String> subnets, int mtu) {
        String ranges = subnets.stream().map(s -> "[{\"subnet\": \"" + s + "\"}]").collect(Collectors.joining(", "));
        String routes = subnets.stream().map(s -> "{\"dst\": \"" + (s.contains(":") ? "::/0" : "0.0.0.0/0") + "\"}").collect(Collectors.joining(", "));
        return """
                {
                  "cniVersion": "1.0.0",
                  "name": "%s",
                  "plugins": [
                    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true, "mtu": %d,
                     "ipam": {"type": "host-local", "ranges": [%s], "routes": [%s],
                              "dataDir": "%s"}},
                    {"type": "portmap", "capabilities": {"portMappings": true}}
                  ]
                }
                """.formatted(network, mtu, ranges, routes, node.cniDir().resolve("ipam"));
    }
}
