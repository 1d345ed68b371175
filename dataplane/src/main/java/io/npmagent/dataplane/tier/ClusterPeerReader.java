package io.npmagent.dataplane.tier;

import io.npmagent.dataplane.model.ApiSyntax;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.ClusterNetworkPolicy;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.FieldErrors;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Selector;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Validates one entry of a ClusterNetworkPolicy rule's {@code from} or {@code to} for
 * {@link ClusterPolicyNormalizer}: exactly one peer kind, ingress peers only {@code namespaces} or
 * {@code pods}, selectors, networks (canonical CIDRs, no duplicates), and {@code domainNames}, which is
 * always refused. A peer that sets none of the kinds this model knows is what a peer of a newer API's
 * kind looks like: an error, so its rule fails closed, as the API asks.
 */
final class ClusterPeerReader {
    static final int MAX_NETWORKS = 25;
    static final int MAX_CIDR_LENGTH = 43;

    private ClusterPeerReader() {}

    /** The peers the entry stands for ({@code networks} gives one per CIDR); empty, with errors added, when invalid. */
    static List<ClusterPeer> read(ClusterNetworkPolicy.Peer peer, Direction direction, String at, FieldErrors errors) {
        String kinds = direction == Direction.INGRESS ? "namespaces and pods" : "namespaces, pods, nodes, networks and domainNames";
        if (peer == null) {
            errors.add(at, "must specify exactly one of " + kinds);
            return List.of();
        }
        int before = errors.count();
        List<String> set = new ArrayList<>();
        List<ClusterPeer> out = new ArrayList<>();
        if (peer.namespaces() != null) {
            set.add("namespaces");
            Selector namespaces = Selector.parse(peer.namespaces(), at + ".namespaces", errors);
            if (namespaces != null) {
                out.add(new ClusterPeer.Pods(namespaces, Selector.ALL));
            }
        }
        if (peer.pods() != null) {
            set.add("pods");
            Selector namespaces = Selector.parse(peer.pods().namespaceSelector(), at + ".pods.namespaceSelector", errors);
            Selector pods = null;
            if (peer.pods().podSelector() == null) {
                errors.add(at + ".pods.podSelector", "required");
            } else {
                pods = Selector.parse(peer.pods().podSelector(), at + ".pods.podSelector", errors);
            }
            if (namespaces != null && pods != null) {
                out.add(new ClusterPeer.Pods(namespaces, pods));
            }
        }
        if (peer.nodes() != null) {
            set.add("nodes");
            Selector nodes = Selector.parse(peer.nodes(), at + ".nodes", errors);
            if (nodes != null) {
                out.add(new ClusterPeer.Nodes(nodes));
            }
        }
        if (peer.networks() != null) {
            set.add("networks");
            out.addAll(networks(peer.networks(), at + ".networks", errors));
        }
        if (peer.domainNames() != null) {
            set.add("domainNames");
            errors.add(at + ".domainNames", "domainNames peers are not supported by npm-agent (matching them needs the "
                    + "DNS answers a pod received); the rule fails closed: an Accept rule matches nothing, a Deny or "
                    + "Pass rule denies every connection that reaches it");
        }
        if (direction == Direction.INGRESS) {
            for (String egressOnly : List.of("nodes", "networks", "domainNames")) {
                if (set.contains(egressOnly)) {
                    errors.add(at + "." + egressOnly, "not allowed in an ingress peer (namespaces or pods only)");
                }
            }
        }
        if (set.isEmpty()) {
            errors.add(at, "sets none of " + kinds + ": a peer kind this agent does not know (written for a newer API?) "
                    + "or an empty peer");
        } else if (set.size() > 1) {
            errors.add(at, "must specify exactly one of " + kinds + ", has " + String.join(" and ", set));
        }
        return errors.count() == before ? out : List.of();
    }

    private static List<ClusterPeer> networks(List<String> networks, String at, FieldErrors errors) {
        List<ClusterPeer> out = new ArrayList<>();
        if (networks.isEmpty() || networks.size() > MAX_NETWORKS) {
            errors.add(at, "must have between 1 and " + MAX_NETWORKS + " items, has " + networks.size());
        }
        Set<String> seen = new HashSet<>();
        for (int k = 0; k < networks.size(); k++) {
            String text = networks.get(k);
            String itemAt = at + "[" + k + "]";
            if (text != null && !seen.add(text)) {
                errors.add(itemAt, "duplicate value " + ApiSyntax.quote(text));
                continue;
            }
            Cidr cidr = cidr(text, itemAt, errors);
            if (cidr != null) {
                out.add(new ClusterPeer.Network(cidr));
            }
        }
        return out;
    }

    /**
     * A CIDR as the CRD's CEL rule admits it: {@code isCIDR(self) && cidr(self) == cidr(self).masked()}.
     * {@code isCIDR} parses with Go's {@code netip.ParsePrefix}, stricter than the "sloppy" parse
     * {@link Cidr#parse} does for ipBlock: no leading zeros in an IPv4 octet or in the prefix length.
     */
    private static Cidr cidr(String text, String at, FieldErrors errors) {
        if (text == null) {
            errors.add(at, "must not be null");
            return null;
        }
        if (text.length() > MAX_CIDR_LENGTH) {
            errors.add(at, "must be no more than " + MAX_CIDR_LENGTH + " characters");
            return null;
        }
        if (hasLeadingZero(text)) {
            errors.add(at, "Invalid CIDR format provided: " + ApiSyntax.quote(text) + " has a number with a leading zero");
            return null;
        }
        Cidr cidr;
        try {
            cidr = Cidr.parse(text);
        } catch (IllegalArgumentException e) {
            errors.add(at, "Invalid CIDR format provided: " + e.getMessage());
            return null;
        }
        IpAddress written = IpAddress.parse(text.substring(0, text.indexOf('/')));
        if (!written.equals(cidr.network())) {
            errors.add(at, "Invalid CIDR format provided: " + ApiSyntax.quote(text) + " has host bits set (the network is "
                    + cidr + ")");
            return null;
        }
        return cidr;
    }

    /** A leading zero in the prefix length, or in an octet of a dotted IPv4 address. */
    private static boolean hasLeadingZero(String text) {
        int slash = text.indexOf('/');
        if (slash < 0) {
            return false; // no prefix length: Cidr.parse says so
        }
        List<String> numbers = new ArrayList<>(List.of(text.substring(slash + 1)));
        if (text.indexOf(':') < 0) {
            numbers.addAll(List.of(text.substring(0, slash).split("\\.", -1)));
        }
        return numbers.stream().anyMatch(n -> n.length() > 1 && n.startsWith("0"));
    }
}
