package io.npmagent.dataplane.desired;

import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import java.util.Optional;

/**
 * Reads a {@link DesiredState} the way a backend would and answers, for one packet, what each side of
 * the node would do. It knows nothing of NetworkPolicy: only rows. Written apart from the reference
 * evaluator on purpose, so that tests comparing the two catch a mistake in either.
 *
 * <p>For a packet from {@code src} to {@code dst}: the egress side applies when {@code src} is a local
 * pod isolated for egress; it passes when a rule of one of that pod's egress policies has a peer that
 * holds {@code dst} and a port that matches on {@code dst}. The ingress side mirrors it at {@code dst}.
 * Named ports are looked up in the identity of the destination address.
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
        if (!pod.get().isolated(direction)) {
            return Outcome.ALLOW;
        }
        IdentityId peerId = state.addresses().get(peer);
        Identity dstIdentity = identityAt(dst);
        for (PolicyKey key : pod.get().policies(direction)) {
            CompiledPolicy policy = state.policies().get(key);
            for (CompiledRule rule : policy.rules(direction)) {
                if (peerIn(rule, peer, peerId) && portIn(rule, port, protocol, dstIdentity)) {
                    return Outcome.ALLOW;
                }
            }
        }
        return Outcome.DENY;
    }

    private Identity identityAt(IpAddress ip) {
        IdentityId id = state.addresses().get(ip);
        return id == null ? null : state.identities().get(id);
    }

    private boolean peerIn(CompiledRule rule, IpAddress peer, IdentityId peerId) {
        if (rule.anyPeer()) {
            return true;
        }
        for (PeerSetKey set : rule.peers()) {
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

    private static boolean portIn(CompiledRule rule, int port, Protocol protocol, Identity destination) {
        if (rule.anyPort()) {
            return true;
        }
        for (PortMatch m : rule.ports()) {
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
