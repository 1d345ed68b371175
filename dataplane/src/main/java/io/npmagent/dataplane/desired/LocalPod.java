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
 * A pod appears here once it has an address.
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
        String congestion) {

    public LocalPod {
        bandwidth = bandwidth == null ? BandwidthLimits.NONE : bandwidth;
        ips = List.copyOf(ips);
        ingressPolicies = List.copyOf(ingressPolicies);
        egressPolicies = List.copyOf(egressPolicies);
    }

    /** A pod row with the default congestion control. */
    public LocalPod(PodKey key, List<IpAddress> ips, IdentityId identity, List<PolicyKey> ingressPolicies,
                    List<PolicyKey> egressPolicies, BandwidthLimits bandwidth) {
        this(key, ips, identity, ingressPolicies, egressPolicies, bandwidth, null);
    }

    public List<PolicyKey> policies(Direction direction) {
        return direction == Direction.INGRESS ? ingressPolicies : egressPolicies;
    }

    public boolean isolated(Direction direction) {
        return !policies(direction).isEmpty();
    }
}
