package io.npmagent.dataplane.tier;

import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.Tier;
import io.npmagent.dataplane.model.ValidationError;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A ClusterNetworkPolicy after {@link ClusterPolicyNormalizer}: the tiers it is enforced in (the one it
 * names; both, deny-only, when its tier cannot be read), its priority, the pods it applies to, its rules per direction in order, and what was wrong with it (empty
 * for a valid policy). Rules that match nothing (an invalid Accept) are left out, so indexes may skip.
 */
public record NormalizedClusterPolicy(
        String name,
        Set<Tier> tiers,
        int priority,
        ClusterSubject subject,
        List<ClusterRule> ingress,
        List<ClusterRule> egress,
        List<ValidationError> errors) {

    public NormalizedClusterPolicy {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(subject, "subject");
        if (tiers.isEmpty() || !CLUSTER_TIERS.containsAll(tiers)) {
            throw new IllegalArgumentException("a ClusterNetworkPolicy is in the Admin or Baseline tier, not " + tiers);
        }
        tiers = Collections.unmodifiableSet(EnumSet.copyOf(tiers));
        ingress = List.copyOf(ingress);
        egress = List.copyOf(egress);
        errors = List.copyOf(errors);
    }

    private static final Set<Tier> CLUSTER_TIERS = EnumSet.of(Tier.ADMIN, Tier.BASELINE);

    public boolean inTier(Tier tier) {
        return tiers.contains(tier);
    }

    public List<ClusterRule> rules(Direction direction) {
        return direction == Direction.INGRESS ? ingress : egress;
    }

    public boolean valid() {
        return errors.isEmpty();
    }
}
