package io.npmagent.dataplane.desired;

import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.Tier;
import java.util.List;

/**
 * The ClusterNetworkPolicies that select one local pod and have rules for a direction, per tier and
 * direction, each list in the order its policies are tried ({@link io.npmagent.dataplane.tier.TierOrder}:
 * priority, then name). A side of a connection walks: the Admin list (the first Accept or Deny decides,
 * a Pass skips the rest of the list), the pod's NetworkPolicies if they isolate it, the Baseline list,
 * and then allow. A name the backend does not hold (yet) fails closed: it denies whatever reaches it.
 */
public record TierPolicies(List<String> adminIngress, List<String> adminEgress, List<String> baselineIngress, List<String> baselineEgress) {
    public static final TierPolicies NONE = new TierPolicies(List.of(), List.of(), List.of(), List.of());

    public TierPolicies {
        adminIngress = List.copyOf(adminIngress);
        adminEgress = List.copyOf(adminEgress);
        baselineIngress = List.copyOf(baselineIngress);
        baselineEgress = List.copyOf(baselineEgress);
    }

    /** The names for one tier (Admin or Baseline) and direction, in order. */
    public List<String> of(Tier tier, Direction direction) {
        boolean ingress = direction == Direction.INGRESS;
        return switch (tier) {
            case ADMIN -> ingress ? adminIngress : adminEgress;
            case BASELINE -> ingress ? baselineIngress : baselineEgress;
            default -> throw new IllegalArgumentException("no ClusterNetworkPolicy tier: " + tier);
        };
    }

    /** Whether any ClusterNetworkPolicy has a say in this direction. */
    public boolean any(Direction direction) {
        return !of(Tier.ADMIN, direction).isEmpty() || !of(Tier.BASELINE, direction).isEmpty();
    }

    public boolean isEmpty() {
        return this.equals(NONE);
    }

    @Override
    public String toString() {
        return "admin{ingress=" + adminIngress + ", egress=" + adminEgress + "} baseline{ingress=" + baselineIngress
                + ", egress=" + baselineEgress + "}";
    }
}
