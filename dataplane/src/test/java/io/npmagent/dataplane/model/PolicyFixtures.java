package io.npmagent.dataplane.model;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Short spellings for NetworkPolicies in tests, close to the YAML they stand for:
 * {@code policy("x", "web").select(labels("app", "web")).ingress(rule(peers(pods(labels("app", "api"))), ports(tcp(80))))}.
 */
public final class PolicyFixtures {
    private PolicyFixtures() {}

    public static Map<String, String> labels(String... keyValues) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put(keyValues[i], keyValues[i + 1]);
        }
        return m;
    }

    public static LabelSelector match(String... keyValues) {
        return LabelSelector.matchLabels(labels(keyValues));
    }

    public static LabelSelector expression(String key, String operator, String... values) {
        return new LabelSelector(Map.of(), List.of(new LabelSelector.Requirement(key, operator, List.of(values))));
    }

    public static NetworkPolicy.Peer pods(LabelSelector podSelector) {
        return new NetworkPolicy.Peer(podSelector, null, null);
    }

    public static NetworkPolicy.Peer namespaces(LabelSelector namespaceSelector) {
        return new NetworkPolicy.Peer(null, namespaceSelector, null);
    }

    public static NetworkPolicy.Peer podsInNamespaces(LabelSelector podSelector, LabelSelector namespaceSelector) {
        return new NetworkPolicy.Peer(podSelector, namespaceSelector, null);
    }

    public static NetworkPolicy.Peer block(String cidr, String... except) {
        return new NetworkPolicy.Peer(null, null, new NetworkPolicy.IpBlock(cidr, List.of(except)));
    }

    public static NetworkPolicy.Port port(String protocol, int port) {
        return new NetworkPolicy.Port(protocol, NetworkPolicy.PortValue.number(port), null);
    }

    public static NetworkPolicy.Port range(String protocol, int port, int endPort) {
        return new NetworkPolicy.Port(protocol, NetworkPolicy.PortValue.number(port), endPort);
    }

    public static NetworkPolicy.Port named(String protocol, String name) {
        return new NetworkPolicy.Port(protocol, NetworkPolicy.PortValue.name(name), null);
    }

    public static NetworkPolicy.Port anyPortOf(String protocol) {
        return new NetworkPolicy.Port(protocol, null, null);
    }

    public static List<NetworkPolicy.Peer> peers(NetworkPolicy.Peer... peers) {
        return Arrays.asList(peers);
    }

    public static List<NetworkPolicy.Port> ports(NetworkPolicy.Port... ports) {
        return Arrays.asList(ports);
    }

    public static NetworkPolicy.Rule rule(List<NetworkPolicy.Peer> peers, List<NetworkPolicy.Port> ports) {
        return new NetworkPolicy.Rule(peers, ports);
    }

    public static NetworkPolicy.Rule allowAll() {
        return new NetworkPolicy.Rule(null, null);
    }

    public static Builder policy(String namespace, String name) {
        return new Builder(namespace, name);
    }

    /** A policy selecting every pod of its namespace with no types and no rules until told otherwise. */
    public static final class Builder {
        private final String namespace;
        private final String name;
        private LabelSelector podSelector = LabelSelector.EMPTY;
        private List<String> policyTypes;
        private List<NetworkPolicy.Rule> ingress;
        private List<NetworkPolicy.Rule> egress;

        private Builder(String namespace, String name) {
            this.namespace = namespace;
            this.name = name;
        }

        public Builder select(LabelSelector podSelector) {
            this.podSelector = podSelector;
            return this;
        }

        public Builder types(String... policyTypes) {
            this.policyTypes = List.of(policyTypes);
            return this;
        }

        public Builder ingress(NetworkPolicy.Rule... rules) {
            this.ingress = Arrays.asList(rules);
            return this;
        }

        public Builder egress(NetworkPolicy.Rule... rules) {
            this.egress = Arrays.asList(rules);
            return this;
        }

        public NetworkPolicy build() {
            return new NetworkPolicy(namespace, name, podSelector, policyTypes, ingress, egress);
        }
    }
}
