package io.npmagent.dataplane.eval;

import io.npmagent.dataplane.desired.CompiledRule;
import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.desired.PortMatch;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.Protocol;
import java.util.function.Function;

/**
 * Whether a NetworkPolicy rule's peers and ports match one end and one port, as the reference evaluator
 * decides it: shared with {@link NearestRule}, which asks the two halves apart, so that "almost
 * admitted" can never disagree with "admitted".
 */
final class RuleMatching {
    private RuleMatching() {}

    /**
     * @param peer       the pod at the other end (a live pod-network pod), or null
     * @param peerIp     the other end's address
     * @param namespaces a namespace's labels as the cluster has them (or as the API server would give them)
     */
    static boolean peerMatches(CompiledRule rule, Pod peer, IpAddress peerIp, Function<String, Namespace> namespaces) {
        if (rule.anyPeer()) {
            return true;
        }
        for (PeerSetKey key : rule.peers()) {
            if (key instanceof PeerSetKey.CidrPeers cidr) {
                if (cidr.contains(peerIp)) {
                    return true;
                }
            } else if (key instanceof PeerSetKey.SelectorPeers sel && peer != null) {
                boolean namespaceMatches = sel.namespace() != null
                        ? sel.namespace().equals(peer.namespace())
                        : sel.namespaceSelector().matches(namespaces.apply(peer.namespace()).labels());
                if (namespaceMatches && sel.podSelector().matches(peer.labels())) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * @param destination the pod the connection is to (named ports resolve on it), or null
     * @param protocol    null for a protocol without ports a rule could name (ICMP): only "every port" matches it
     */
    static boolean portMatches(CompiledRule rule, Pod destination, int port, Protocol protocol) {
        if (rule.anyPort()) {
            return true;
        }
        if (protocol == null) {
            return false;
        }
        for (PortMatch m : rule.ports()) {
            if (m instanceof PortMatch.PortRange r) {
                if (r.protocol() == protocol && port >= r.first() && port <= r.last()) {
                    return true;
                }
            } else if (m instanceof PortMatch.NamedPort n && n.protocol() == protocol && destination != null) {
                if (destination.namedPort(n.name(), protocol).filter(p -> p == port).isPresent()) {
                    return true;
                }
            }
        }
        return false;
    }
}
