package io.npmagent.dataplane.eval;

import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import java.util.List;

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
     *                   endpoint (external address, host-network pod), and nothing is isolated
     * @param isolatedBy the policies that select the pod for this direction (empty: not isolated)
     * @param allowedBy  the rules of those policies that admit the connection
     */
    public record Side(Direction direction, PodKey pod, List<PolicyKey> isolatedBy, List<RuleRef> allowedBy) {
        public Side {
            isolatedBy = List.copyOf(isolatedBy);
            allowedBy = List.copyOf(allowedBy);
        }

        public boolean isolated() {
            return !isolatedBy.isEmpty();
        }

        public boolean allowed() {
            return !isolated() || !allowedBy.isEmpty();
        }

        String explain() {
            String who = direction == Direction.EGRESS ? "egress from " : "ingress to ";
            if (pod == null) {
                return who + "a non-pod endpoint: not isolated";
            }
            if (!isolated()) {
                return who + pod + ": not isolated (no policy selects it for " + direction.apiName() + ")";
            }
            if (allowedBy.isEmpty()) {
                return who + pod + ": DENIED, isolated by " + isolatedBy + " and no rule admits it";
            }
            return who + pod + ": allowed by " + allowedBy;
        }
    }

    /** A few lines for people: the verdict, then each side's reason. */
    public String explain() {
        return source + " -> " + destination + " " + protocol + "/" + port + ": " + (allowed() ? "ALLOWED" : "DENIED")
                + "\n  " + egress.explain() + "\n  " + ingress.explain();
    }
}
