package io.npmagent.dataplane.desired;

import io.npmagent.dataplane.bandwidth.BandwidthLimits;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import java.util.List;

/**
 * A pod this node enforces for: its addresses (the ones it owns), its identity (for its own named
 * ports) and, per direction, the policies that select it, sorted. An empty list means that direction
 * is not isolated: all traffic passes. Its bandwidth limits and congestion control are part of the
 * row, so a rate or congestion control change and a policy change of the pod land in the same batch.
 * A pod appears here once it has an address. {@code tiers} lists the ClusterNetworkPolicies that
 * select it, per tier and direction, in the order they are tried; a direction is judged when a
 * NetworkPolicy isolates it or a ClusterNetworkPolicy has a say in it ({@link #judged}).
 *
 * @param congestion the congestion control its TCP connections get ({@code npm-agent.io/tcp-congestion}),
 *                   null for the default
 */
public record LocalPod(
        PodKey key,
        List<IpAddress> ips,
        IdentityId identity,
        List<PolicyKey> ingressPolicies,
        List<PolicyKey> egressPolicies,
        BandwidthLimits bandwidth,
        String congestion,
        TierPolicies tiers) {

    public LocalPod {
        bandwidth = bandwidth == null ? BandwidthLimits.NONE : bandwidth;
        tiers = tiers == null ? TierPolicies.NONE : tiers;
        ips = List.copyOf(ips);
        ingressPolicies = List.copyOf(ingressPolicies);
        egressPolicies = List.copyOf(egressPolicies);
    }

    /** A pod row with the default congestion control. */
    public LocalPod(PodKey key, List<IpAddress> ips, IdentityId identity, List<PolicyKey> ingressPolicies,
                    List<PolicyKey> egressPolicies, BandwidthLimits bandwidth) {
        this(key, ips, identity, ingressPolicies, egressPolicies, bandwidth, null, TierPolicies.NONE);
    }

    /** A pod row no ClusterNetworkPolicy selects. */
    public LocalPod(PodKey key, List<IpAddress> ips, IdentityId identity, List<PolicyKey> ingressPolicies,
                    List<PolicyKey> egressPolicies, BandwidthLimits bandwidth, String congestion) {
        this(key, ips, identity, ingressPolicies, egressPolicies, bandwidth, congestion, TierPolicies.NONE);
    }

    public List<PolicyKey> policies(Direction direction) {
        return direction == Direction.INGRESS ? ingressPolicies : egressPolicies;
    }

    /** Whether NetworkPolicies isolate this direction (then what they do not admit, and no tier decides, is dropped). */
    public boolean isolated(Direction direction) {
        return !policies(direction).isEmpty();
    }

    /** Whether anything judges this direction: NetworkPolicy isolation or a ClusterNetworkPolicy. Else all passes. */
    public boolean judged(Direction direction) {
        return isolated(direction) || tiers.any(direction);
    }
}
