package io.npmagent.dataplane.model;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A node as ClusterNetworkPolicy's {@code nodes} egress peer sees it: its labels, which the peer's
 * selector matches, and the IP addresses of its {@code status.addresses} (InternalIP and ExternalIP;
 * host names are not addresses and are left out by the source), which the peer admits.
 */
public record Node(String name, Map<String, String> labels, List<IpAddress> addresses) {

    public Node {
        Objects.requireNonNull(name, "name");
        labels = labels == null ? Map.of() : Map.copyOf(labels);
        addresses = addresses == null ? List.of() : List.copyOf(addresses);
    }
}
