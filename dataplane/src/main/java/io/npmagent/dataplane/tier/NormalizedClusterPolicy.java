package io.npmagent.dataplane.tier;

import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.Tier;
import io.npmagent.dataplane.model.ValidationError;
import java.util.List;
import java.util.Objects;

/**
 * A ClusterNetworkPolicy after {@link ClusterPolicyNormalizer}: its tier (Admin or Baseline), its
 * priority, the pods it applies to, its rules per direction in order, and what was wrong with it (empty
 * for a valid policy). Rules that match nothing (an invalid Accept) are left out, so indexes may skip.
 */
public record NormalizedClusterPolicy(
        String name,
        Tier tier,
        int priority,
        ClusterSubject subject,
        List<ClusterRule> ingress,
        List<ClusterRule> egress,
        List<ValidationError> errors) {

    public NormalizedClusterPolicy {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(subject, "subject");
        if (tier != Tier.ADMIN && tier != Tier.BASELINE) {
            throw new IllegalArgumentException("a ClusterNetworkPolicy is in the Admin or Baseline tier, not " + tier);
        }
        ingress = List.copyOf(ingress);
        egress = List.copyOf(egress);
        errors = List.copyOf(errors);
    }

    public List<ClusterRule> rules(Direction direction) {
        return direction == Direction.INGRESS ? ingress : egress;
    }

    public boolean valid() {
        return errors.isEmpty();
    }
}
