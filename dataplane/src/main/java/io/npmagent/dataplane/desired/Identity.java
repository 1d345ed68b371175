package io.npmagent.dataplane.desired;

import java.util.Map;
import java.util.Objects;

/**
 * Everything a NetworkPolicy can tell about a pod peer: its namespace and that namespace's labels (what
 * namespace selectors see), its own labels (what pod selectors see) and its named ports (how named
 * ports resolve when it is the destination). Pods that agree on all four are indistinguishable to every
 * policy, so they share one identity and every peer set holds identities, not pods.
 */
public record Identity(
        String namespace,
        Map<String, String> namespaceLabels,
        Map<String, String> podLabels,
        Map<PortMatch.NamedPort, Integer> namedPorts) {

    public Identity {
        Objects.requireNonNull(namespace, "namespace");
        namespaceLabels = Map.copyOf(namespaceLabels);
        podLabels = Map.copyOf(podLabels);
        namedPorts = Map.copyOf(namedPorts);
    }
}
