package io.npmagent.dataplane.eval;

import io.npmagent.dataplane.model.Tier;
import io.npmagent.dataplane.tier.RuleAction;
import java.util.Objects;

/**
 * What decided one side (egress or ingress) of a connection: the first tier, walking Admin,
 * NetworkPolicy, Baseline, that made a final decision, or else the default, allow.
 */
public sealed interface Decision {

    boolean allowed();

    /** The tier that decided; null when none did and the default applied. */
    Tier tier();

    /**
     * An Accept or Deny rule of a ClusterNetworkPolicy (Pass is never final).
     *
     * @param failedClosed the rule was invalid, or its policy was, and is enforced stricter than written
     */
    record ByClusterRule(ClusterRuleRef rule, RuleAction action, boolean failedClosed) implements Decision {
        public ByClusterRule {
            Objects.requireNonNull(rule, "rule");
            if (action != RuleAction.ACCEPT && action != RuleAction.DENY) {
                throw new IllegalArgumentException("only Accept and Deny decide, not " + action);
            }
        }

        @Override
        public boolean allowed() {
            return action == RuleAction.ACCEPT;
        }

        @Override
        public Tier tier() {
            return rule.tier();
        }
    }

    /**
     * NetworkPolicies select the pod for this direction: allowed when a rule of one of them admits the
     * connection. Which ones, and which rules, is on the {@link Verdict.Side}.
     */
    record ByNetworkPolicy(boolean allowed) implements Decision {
        @Override
        public Tier tier() {
            return Tier.NETWORK_POLICY;
        }
    }

    /** No tier decided: Kubernetes' default, allow. */
    record ByDefault() implements Decision {
        @Override
        public boolean allowed() {
            return true;
        }

        @Override
        public Tier tier() {
            return null;
        }
    }
}
