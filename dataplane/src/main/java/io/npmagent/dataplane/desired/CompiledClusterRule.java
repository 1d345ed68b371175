package io.npmagent.dataplane.desired;

import io.npmagent.dataplane.tier.RuleAction;
import java.util.List;
import java.util.Objects;

/**
 * One ClusterNetworkPolicy rule in effective form: what it does ({@code action}) to a connection that
 * a peer AND a port of it match. As in {@link CompiledRule}, "any" is explicit. Peers are the sets
 * NetworkPolicy rules use: pods and namespaces peers are {@link PeerSetKey.SelectorPeers} across
 * namespaces, {@code networks} and the addresses of the Nodes a {@code nodes} peer selects are
 * {@link PeerSetKey.CidrPeers} (by address, so they match pod addresses too). A named port is one
 * {@link PortMatch.NamedPort} per protocol (the API's names carry none). A rule whose peers resolve
 * to nothing (a {@code nodes} peer selecting no Node) matches nothing and is left out.
 *
 * @param index   position of the rule in the policy's {@code ingress} or {@code egress} list
 * @param name    the rule's {@code name}, or null: for attribution only
 * @param anyPeer every other end, pod or not (only a rule that failed closed)
 * @param anyPort the rule had no {@code protocols}: every port of every IP protocol (ICMP too)
 */
public record CompiledClusterRule(
        int index, String name, RuleAction action, boolean anyPeer, List<PeerSetKey> peers, boolean anyPort, List<PortMatch> ports) {

    public CompiledClusterRule {
        Objects.requireNonNull(action, "action");
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
        return "#" + index + " " + action.apiName() + " peers=" + (anyPeer ? "any" : peers) + " ports=" + (anyPort ? "any" : ports);
    }
}
