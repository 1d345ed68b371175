package io.npmagent.dataplane.desired;

import java.util.List;

/**
 * One valid ingress or egress rule in effective form. A packet matches when a peer matches AND a port
 * matches. "Any" is explicit ({@code anyPeer}, {@code anyPort}) so that an empty list can never be
 * mistaken for "everything": a rule whose every peer or port was invalid is not compiled at all.
 *
 * @param index    position of the rule in the policy's {@code ingress} or {@code egress} list
 * @param anyPeer  the rule had no {@code from}/{@code to}: every source or destination, pods or not
 * @param anyPort  the rule had no {@code ports}: every port of every IP protocol (ICMP too)
 */
public record CompiledRule(int index, boolean anyPeer, List<PeerSetKey> peers, boolean anyPort, List<PortMatch> ports) {

    public CompiledRule {
        peers = List.copyOf(peers);
        ports = List.copyOf(ports);
        if (anyPeer != peers.isEmpty()) {
            throw new IllegalArgumentException("anyPeer must be set exactly when peers is empty");
        }
        if (anyPort != ports.isEmpty()) {
            throw new IllegalArgumentException("anyPort must be set exactly when ports is empty");
        }
    }

    @Override
    public String toString() {
        return "#" + index + " peers=" + (anyPeer ? "any" : peers) + " ports=" + (anyPort ? "any" : ports);
    }
}
