package io.npmagent.dataplane.eval;

import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * The answer to "may this connection be opened", with its reasons. A connection is allowed when its
 * egress side (policies of the source) and its ingress side (policies of the destination) both allow it.
 */
public record Verdict(Endpoint source, Endpoint destination, int port, String protocol, Side egress, Side ingress) {

    public boolean allowed() {
        return egress.allowed() && ingress.allowed();
    }

    /**
     * One side of a connection.
     *
     * @param pod        the pod whose policies decide this side; null when that end is not a pod
     *                   endpoint (external address, host-network pod), and nothing applies to it
     * @param isolatedBy the NetworkPolicies that select the pod for this direction (empty: not isolated).
     *                   Listed whichever tier decided: they are what the NetworkPolicy tier would decide by
     * @param allowedBy  the rules of those policies that admit the connection
     * @param passedBy   the ClusterNetworkPolicy Pass rules that sent the walk on to the next tier, in order
     *                   (at most one per tier: a Pass skips the rest of its tier)
     * @param decision   what decided: an Accept or Deny rule, the NetworkPolicies, or the default
     */
    public record Side(
            Direction direction,
            PodKey pod,
            List<PolicyKey> isolatedBy,
            List<RuleRef> allowedBy,
            List<ClusterRuleRef> passedBy,
            Decision decision) {

        public Side {
            isolatedBy = List.copyOf(isolatedBy);
            allowedBy = List.copyOf(allowedBy);
            passedBy = List.copyOf(passedBy);
            Objects.requireNonNull(decision, "decision");
        }

        /** True when NetworkPolicies select the pod for this direction (whether or not their tier was reached). */
        public boolean isolated() {
            return !isolatedBy.isEmpty();
        }

        public boolean allowed() {
            return decision.allowed();
        }

        /**
         * Who decided, in one line: {@code Admin cnp/deny-metadata egress[0]}, {@code NetworkPolicy
         * x/allow-web spec.ingress[1]} (every admitting rule) or {@code NetworkPolicy x/deny} (every
         * isolating policy, when none admits), {@code Baseline cnp/default ingress[0]}, {@code default allow}.
         */
        public String attribution() {
            if (decision instanceof Decision.ByClusterRule rule) {
                return rule.rule().toString();
            }
            if (decision instanceof Decision.ByNetworkPolicy np) {
                return "NetworkPolicy " + (np.allowed() ? join(allowedBy) : join(isolatedBy));
            }
            return "default allow";
        }

        private static String join(List<?> items) {
            return items.stream().map(Object::toString).collect(Collectors.joining(", "));
        }

        String explain() {
            String who = direction == Direction.EGRESS ? "egress from " : "ingress to ";
            if (pod == null) {
                return who + "a non-pod endpoint: not isolated";
            }
            String passed = passedBy.isEmpty() ? "" : " (after Pass by " + join(passedBy) + ")";
            if (decision instanceof Decision.ByClusterRule rule) {
                return who + pod + ": " + (rule.allowed() ? "allowed" : "DENIED") + " by " + rule.rule() + ", "
                        + rule.action().apiName() + (rule.failedClosed() ? " (the rule fails closed: it or its policy is invalid)" : "")
                        + passed;
            }
            if (!isolated()) {
                return who + pod + ": not isolated (no NetworkPolicy selects it for " + direction.apiName()
                        + ") and no ClusterNetworkPolicy rule decides: default allow" + passed;
            }
            if (allowedBy.isEmpty()) {
                return who + pod + ": DENIED, isolated by " + isolatedBy + " and no rule admits it" + passed;
            }
            return who + pod + ": allowed by " + allowedBy + passed;
        }
    }

    /** A few lines for people: the verdict, then each side's reason. */
    public String explain() {
        return source + " -> " + destination + " " + protocol + "/" + port + ": " + (allowed() ? "ALLOWED" : "DENIED")
                + "\n  " + egress.explain() + "\n  " + ingress.explain();
    }
}
