package io.npmagent.dataplane.model;

import java.util.Arrays;
import java.util.List;

/**
 * Short spellings for ClusterNetworkPolicies in tests, close to the YAML they stand for:
 * {@code admin("deny-metadata", 10).subjectNamespaces(match()).egress(deny(to(networks("169.254.169.254/32")))).build()}.
 * Names differ from {@link PolicyFixtures}' so both can be imported together.
 */
public final class ClusterPolicyFixtures {
    private ClusterPolicyFixtures() {}

    public static Builder admin(String name, int priority) {
        return cnp(name).tier("Admin").priority(priority);
    }

    public static Builder baseline(String name, int priority) {
        return cnp(name).tier("Baseline").priority(priority);
    }

    /** A policy with nothing set: no tier, priority, subject or rules until told. */
    public static Builder cnp(String name) {
        return new Builder(name);
    }

    public static ClusterNetworkPolicy.Peer inNamespaces(LabelSelector namespaces) {
        return new ClusterNetworkPolicy.Peer(namespaces, null, null, null, null);
    }

    public static ClusterNetworkPolicy.Peer podsIn(LabelSelector namespaceSelector, LabelSelector podSelector) {
        return new ClusterNetworkPolicy.Peer(null, new ClusterNetworkPolicy.NamespacedPods(namespaceSelector, podSelector), null, null, null);
    }

    public static ClusterNetworkPolicy.Peer nodes(LabelSelector nodes) {
        return new ClusterNetworkPolicy.Peer(null, null, nodes, null, null);
    }

    public static ClusterNetworkPolicy.Peer networks(String... cidrs) {
        return new ClusterNetworkPolicy.Peer(null, null, null, List.of(cidrs), null);
    }

    public static ClusterNetworkPolicy.Peer domainNames(String... names) {
        return new ClusterNetworkPolicy.Peer(null, null, null, null, List.of(names));
    }

    /** A peer with no field set: what a peer of a kind this model does not know looks like. */
    public static ClusterNetworkPolicy.Peer unknownPeer() {
        return new ClusterNetworkPolicy.Peer(null, null, null, null, null);
    }

    /** {@code from} or {@code to}. */
    public static List<ClusterNetworkPolicy.Peer> to(ClusterNetworkPolicy.Peer... peers) {
        return Arrays.asList(peers);
    }

    public static List<ClusterNetworkPolicy.Peer> from(ClusterNetworkPolicy.Peer... peers) {
        return Arrays.asList(peers);
    }

    public static ClusterNetworkPolicy.ProtocolMatch tcp(int port) {
        return transport("TCP", number(port));
    }

    public static ClusterNetworkPolicy.ProtocolMatch udp(int port) {
        return transport("UDP", number(port));
    }

    public static ClusterNetworkPolicy.ProtocolMatch sctp(int port) {
        return transport("SCTP", number(port));
    }

    public static ClusterNetworkPolicy.ProtocolMatch tcpRange(int start, int end) {
        return transport("TCP", new ClusterNetworkPolicy.Port(null, new ClusterNetworkPolicy.PortRange(start, end)));
    }

    public static ClusterNetworkPolicy.ProtocolMatch udpRange(int start, int end) {
        return transport("UDP", new ClusterNetworkPolicy.Port(null, new ClusterNetworkPolicy.PortRange(start, end)));
    }

    public static ClusterNetworkPolicy.ProtocolMatch namedPort(String name) {
        return new ClusterNetworkPolicy.ProtocolMatch(null, null, null, name);
    }

    public static ClusterNetworkPolicy.Port number(int port) {
        return new ClusterNetworkPolicy.Port(port, null);
    }

    /** {@code tcp}, {@code udp} or {@code sctp} with this {@code destinationPort} (null: written as {@code {}}). */
    public static ClusterNetworkPolicy.ProtocolMatch transport(String protocol, ClusterNetworkPolicy.Port port) {
        ClusterNetworkPolicy.TransportMatch m = new ClusterNetworkPolicy.TransportMatch(port);
        return switch (protocol) {
            case "TCP" -> new ClusterNetworkPolicy.ProtocolMatch(m, null, null, null);
            case "UDP" -> new ClusterNetworkPolicy.ProtocolMatch(null, m, null, null);
            case "SCTP" -> new ClusterNetworkPolicy.ProtocolMatch(null, null, m, null);
            default -> throw new IllegalArgumentException(protocol);
        };
    }

    /** A rule; no protocols means {@code protocols} absent (every protocol and port). */
    public static ClusterNetworkPolicy.Rule rule(
            String action, List<ClusterNetworkPolicy.Peer> peers, ClusterNetworkPolicy.ProtocolMatch... protocols) {
        return new ClusterNetworkPolicy.Rule(null, action, peers, protocols.length == 0 ? null : Arrays.asList(protocols));
    }

    public static ClusterNetworkPolicy.Rule accept(List<ClusterNetworkPolicy.Peer> peers, ClusterNetworkPolicy.ProtocolMatch... protocols) {
        return rule("Accept", peers, protocols);
    }

    public static ClusterNetworkPolicy.Rule deny(List<ClusterNetworkPolicy.Peer> peers, ClusterNetworkPolicy.ProtocolMatch... protocols) {
        return rule("Deny", peers, protocols);
    }

    public static ClusterNetworkPolicy.Rule pass(List<ClusterNetworkPolicy.Peer> peers, ClusterNetworkPolicy.ProtocolMatch... protocols) {
        return rule("Pass", peers, protocols);
    }

    /** {@code rule} with a {@code name}. */
    public static ClusterNetworkPolicy.Rule named(String name, ClusterNetworkPolicy.Rule rule) {
        return new ClusterNetworkPolicy.Rule(name, rule.action(), rule.peers(), rule.protocols());
    }

    public static final class Builder {
        private final String name;
        private String tier;
        private Integer priority;
        private ClusterNetworkPolicy.Subject subject;
        private List<ClusterNetworkPolicy.Rule> ingress;
        private List<ClusterNetworkPolicy.Rule> egress;

        private Builder(String name) {
            this.name = name;
        }

        public Builder tier(String tier) {
            this.tier = tier;
            return this;
        }

        public Builder priority(Integer priority) {
            this.priority = priority;
            return this;
        }

        public Builder subject(ClusterNetworkPolicy.Subject subject) {
            this.subject = subject;
            return this;
        }

        public Builder subjectNamespaces(LabelSelector namespaces) {
            return subject(new ClusterNetworkPolicy.Subject(namespaces, null));
        }

        public Builder subjectPods(LabelSelector namespaceSelector, LabelSelector podSelector) {
            return subject(new ClusterNetworkPolicy.Subject(null, new ClusterNetworkPolicy.NamespacedPods(namespaceSelector, podSelector)));
        }

        public Builder ingress(ClusterNetworkPolicy.Rule... rules) {
            this.ingress = Arrays.asList(rules);
            return this;
        }

        public Builder egress(ClusterNetworkPolicy.Rule... rules) {
            this.egress = Arrays.asList(rules);
            return this;
        }

        public ClusterNetworkPolicy build() {
            return new ClusterNetworkPolicy(name, tier, priority, subject, ingress, egress);
        }
    }
}
