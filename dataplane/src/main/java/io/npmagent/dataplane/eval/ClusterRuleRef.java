package io.npmagent.dataplane.eval;

import io.npmagent.dataplane.model.ApiSyntax;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.Tier;
import java.util.Objects;

/**
 * One rule of one ClusterNetworkPolicy, as flow verdicts name it: {@code Admin cnp/deny-metadata egress[0]},
 * then the rule's name, quoted, when it has one. {@code cnp} is the API's short name: the policy is
 * cluster-scoped, so its name alone identifies it.
 *
 * @param name the rule's {@code name}, or null or empty when it has none
 */
public record ClusterRuleRef(Tier tier, String policy, Direction direction, int index, String name) {

    public ClusterRuleRef {
        Objects.requireNonNull(tier, "tier");
        Objects.requireNonNull(policy, "policy");
        Objects.requireNonNull(direction, "direction");
    }

    /** The rule without its name, which is for people only. */
    public ClusterRuleRef(Tier tier, String policy, Direction direction, int index) {
        this(tier, policy, direction, index, null);
    }

    @Override
    public String toString() {
        return tier.apiName() + " cnp/" + policy + " " + direction.apiName().toLowerCase() + "[" + index + "]"
                + (name == null || name.isEmpty() ? "" : " " + ApiSyntax.quote(name));
    }
}
