package io.npmagent.dataplane.desired;

import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.model.Tier;
import java.util.List;
import java.util.Optional;

/**
 * Reads a {@link DesiredState} the way a backend would and answers, for one packet, what each side of
 * the node would do. It knows nothing of NetworkPolicy: only rows. Written apart from the reference
 * evaluator on purpose, so that tests comparing the two catch a mistake in either.
 *
 * <p>For a packet from {@code src} to {@code dst}: the egress side applies when {@code src} is a local
 * pod. It walks the pod's Admin list (the first ClusterNetworkPolicy rule whose peer holds {@code dst}
 * and whose port matches on {@code dst} decides: Accept passes, Deny drops, Pass skips the rest of the
 * list; a name with no row denies); then, if NetworkPolicies isolate it, it passes when a rule of one of
 * them matches, else drops; then it walks the Baseline list likewise; then it passes. The ingress side
 * mirrors it at {@code dst}. Named ports are looked up in the identity of the destination address.
 */
public final class DesiredStateInterpreter {
    private final DesiredState state;

    public DesiredStateInterpreter(DesiredState state) {
        this.state = state;
    }

    /** What one side of the node does with a packet; NOT_LOCAL when that end is not a local pod. */
    public enum Outcome { ALLOW, DENY, NOT_LOCAL }

    public boolean allowed(IpAddress src, IpAddress dst, int port, Protocol protocol) {
        return side(Direction.EGRESS, src, dst, port, protocol) != Outcome.DENY
                && side(Direction.INGRESS, src, dst, port, protocol) != Outcome.DENY;
    }

    /** The verdict of one side: egress is judged at {@code src}, ingress at {@code dst}. */
    public Outcome side(Direction direction, IpAddress src, IpAddress dst, int port, Protocol protocol) {
        IpAddress self = direction == Direction.EGRESS ? src : dst;
        IpAddress peer = direction == Direction.EGRESS ? dst : src;
        Optional<LocalPod> pod = state.localPodAt(self);
        if (pod.isEmpty()) {
            return Outcome.NOT_LOCAL;
        }
        IdentityId peerId = state.addresses().get(peer);
        Identity dstIdentity = identityAt(dst);
        Outcome admin = tier(pod.get().tiers().of(Tier.ADMIN, direction), direction, peer, peerId, port, protocol, dstIdentity);
        if (admin != null) {
            return admin;
        }
        if (pod.get().isolated(direction)) {
            for (PolicyKey key : pod.get().policies(direction)) {
                CompiledPolicy policy = state.policies().get(key);
                if (policy == null) {
                    continue; // not held (yet): its allows are not there, as in a backend
                }
                for (CompiledRule rule : policy.rules(direction)) {
                    if (peerIn(rule.anyPeer(), rule.peers(), peer, peerId) && portIn(rule.anyPort(), rule.ports(), port, protocol, dstIdentity)) {
                        return Outcome.ALLOW;
                    }
                }
            }
            return Outcome.DENY;
        }
        Outcome baseline = tier(pod.get().tiers().of(Tier.BASELINE, direction), direction, peer, peerId, port, protocol, dstIdentity);
        return baseline != null ? baseline : Outcome.ALLOW;
    }

    /** One tier's list: the first matching rule's Accept or Deny; null when none decides (none matched, or a Pass). */
    private Outcome tier(List<String> names, Direction direction, IpAddress peer, IdentityId peerId, int port, Protocol protocol,
                         Identity dstIdentity) {
        for (String name : names) {
            CompiledClusterPolicy policy = state.clusterPolicies().get(name);
            if (policy == null) {
                return Outcome.DENY; // not held: fails closed
            }
            for (CompiledClusterRule rule : policy.rules(direction)) {
                if (peerIn(rule.anyPeer(), rule.peers(), peer, peerId) && portIn(rule.anyPort(), rule.ports(), port, protocol, dstIdentity)) {
                    return switch (rule.action()) {
                        case ACCEPT -> Outcome.ALLOW;
                        case DENY -> Outcome.DENY;
                        case PASS -> null;
                    };
                }
            }
        }
        return null;
    }

    private Identity identityAt(IpAddress ip) {
        IdentityId id = state.addresses().get(ip);
        return id == null ? null : state.identities().get(id);
    }

    private boolean peerIn(boolean anyPeer, List<PeerSetKey> peers, IpAddress peer, IdentityId peerId) {
        if (anyPeer) {
            return true;
        }
        for (PeerSetKey set : peers) {
            if (set instanceof PeerSetKey.CidrPeers cidr) {
                if (cidr.cidr().contains(peer) && cidr.except().stream().noneMatch(e -> e.contains(peer))) {
                    return true;
                }
            } else if (peerId != null && state.peerSets().get(set).contains(peerId)) {
                return true;
            }
        }
        return false;
    }

    private static boolean portIn(boolean anyPort, List<PortMatch> ports, int port, Protocol protocol, Identity destination) {
        if (anyPort) {
            return true;
        }
        for (PortMatch m : ports) {
            if (m.protocol() != protocol) {
                continue;
            }
            if (m instanceof PortMatch.PortRange r && r.first() <= port && port <= r.last()) {
                return true;
            }
            if (m instanceof PortMatch.NamedPort n && destination != null
                    && Integer.valueOf(port).equals(destination.namedPorts().get(n))) {
                return true;
            }
        }
        return false;
    }
}
