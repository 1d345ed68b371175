package io.npmagent.dataplane.tier;

import io.npmagent.dataplane.model.Tier;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;

/**
 * The order in which the policies of one tier are tried: lower {@code priority} first, and among equal
 * priorities by name, in {@link String#compareTo} order (names are unique, ClusterNetworkPolicies being
 * cluster-scoped, so the order is total).
 *
 * <p>Why by name: the API leaves equal priorities undefined ("the implementation can apply any of the
 * matching policies"), but a verdict that changed with the order informers happened to deliver objects
 * in, or differed between the evaluator and a backend, or between two nodes, could not be tested or
 * trusted. The name is the one stable thing every component sees alike. Within a policy, rules are tried
 * in the order written; the first rule that matches decides.
 */
public final class TierOrder {
    public static final Comparator<NormalizedClusterPolicy> PRECEDENCE =
            Comparator.comparingInt(NormalizedClusterPolicy::priority).thenComparing(NormalizedClusterPolicy::name);

    private TierOrder() {}

    /** The policies of {@code tier} among {@code policies}, in the order they are tried. */
    public static List<NormalizedClusterPolicy> inTier(Tier tier, Collection<NormalizedClusterPolicy> policies) {
        return policies.stream().filter(p -> p.inTier(tier)).sorted(PRECEDENCE).toList();
    }
}
