package io.npmagent.dataplane.flow;

import io.npmagent.dataplane.eval.ClusterRuleRef;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Tier;
import io.npmagent.dataplane.tier.RuleAction;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * What decided a flow's side, as the kernel's verdict read it: the ClusterNetworkPolicy rule that admitted or
 * denied it, or for a default deny every NetworkPolicy that isolates the pod in that direction. (A NetworkPolicy's
 * admitting rule is not recorded by any backend yet: such an allowed flow has no attribution.) Immutable, and interned by
 * {@link AttributionRefs}: the reference the kernel carries always means the same thing.
 */
public sealed interface Attribution {

    /** {@code NetworkPolicy}, {@code ClusterNetworkPolicy}, or empty when no policy decided. */
    String kind();

    /** The tier that decided. */
    Tier tier();

    /** The policies named, each {@code [namespace, name, rule]} ({@code rule}: its index, "isolation", "unheld"). */
    List<List<String>> named();

    /**
     * The metric series a flow it decided counts in ({@code [policy_namespace, policy, rule]}): the rule's, or for a
     * default deny one series for the namespace ({@code [namespace, "", "isolation"]}: the policies isolating a pod
     * are all its namespace's), so a flow costs one counter however many policies isolate the pod.
     */
    default List<List<String>> metricSeries() {
        return named();
    }

    /** For people: {@code Admin cnp/deny-metadata egress[0]}, {@code NetworkPolicy y/deny-all isolates (no rule admits)}. */
    String text();

    /** An Accept or Deny rule of a ClusterNetworkPolicy decided. */
    record ByClusterRule(ClusterRuleRef rule, RuleAction action) implements Attribution {
        public ByClusterRule {
            Objects.requireNonNull(rule, "rule");
            Objects.requireNonNull(action, "action");
        }

        @Override
        public String kind() {
            return "ClusterNetworkPolicy";
        }

        @Override
        public Tier tier() {
            return rule.tier();
        }

        @Override
        public List<List<String>> named() {
            return List.of(List.of("", rule.policy(), Integer.toString(rule.index())));
        }

        @Override
        public String text() {
            return rule + " " + action.apiName();
        }
    }

    /**
     * NetworkPolicies isolate the pod in this direction and none of their rules admits the flow: every one
     * of them, sorted.
     */
    record Isolation(Direction direction, List<PolicyKey> policies) implements Attribution {
        public Isolation {
            Objects.requireNonNull(direction, "direction");
            policies = List.copyOf(policies.stream().sorted().toList());
        }

        @Override
        public String kind() {
            return "NetworkPolicy";
        }

        @Override
        public Tier tier() {
            return Tier.NETWORK_POLICY;
        }

        @Override
        public List<List<String>> named() {
            return policies.stream().map(p -> List.of(p.namespace(), p.name(), "isolation")).toList();
        }

        @Override
        public List<List<String>> metricSeries() {
            return policies.isEmpty() ? List.of() : List.of(List.of(policies.get(0).namespace(), "", "isolation"));
        }

        @Override
        public String text() {
            return "NetworkPolicy " + policies.stream().map(PolicyKey::toString).collect(Collectors.joining(", "))
                    + " isolate" + (policies.size() == 1 ? "s" : "") + " it for " + direction.apiName().toLowerCase() + ", no rule admits it";
        }
    }

    /**
     * The pod lists a ClusterNetworkPolicy the backend does not hold (its batch was refused and waits for a
     * retry): what reaches it is denied, failing closed.
     */
    record Unheld(Tier tier, String policy) implements Attribution {
        public Unheld {
            Objects.requireNonNull(tier, "tier");
            Objects.requireNonNull(policy, "policy");
        }

        @Override
        public String kind() {
            return "ClusterNetworkPolicy";
        }

        @Override
        public List<List<String>> named() {
            return List.of(List.of("", policy, "unheld"));
        }

        @Override
        public String text() {
            return tier.apiName() + " cnp/" + policy + " not applied yet: denied, failing closed";
        }
    }
}
