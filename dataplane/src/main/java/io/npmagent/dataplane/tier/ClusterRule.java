package io.npmagent.dataplane.tier;

import io.npmagent.dataplane.model.ApiSyntax;
import java.util.List;
import java.util.Objects;

/**
 * One ClusterNetworkPolicy rule in effective form. It matches a connection when one of its peers matches
 * the other end AND one of its ports matches the destination port and protocol; "any" is explicit, so
 * an empty list is never read as "everything".
 *
 * <p>A rule read exactly as written has {@code failedClosed} false and at least one peer (the API
 * requires one). A rule that {@link ClusterPolicyNormalizer} made stricter because of an error has it
 * true: an invalid Deny or Pass rule became a Deny of everything that reaches it ({@code anyPeer},
 * {@code anyPort}), and a Pass rule of a policy that only denies became a Deny of what it matches.
 *
 * @param index        position in the policy's {@code ingress} or {@code egress} list
 * @param name         the rule's {@code name} as written, or null; for attribution only
 * @param action       Accept, Deny or Pass
 * @param anyPeer      every other end, pod or not (only ever for a rule that failed closed)
 * @param anyPort      every protocol and port: the rule had no {@code protocols}
 * @param failedClosed the rule is not read as written, but stricter, because of an error
 */
public record ClusterRule(
        int index,
        String name,
        RuleAction action,
        boolean anyPeer,
        List<ClusterPeer> peers,
        boolean anyPort,
        List<ClusterPort> ports,
        boolean failedClosed) {

    public ClusterRule {
        Objects.requireNonNull(action, "action");
        peers = List.copyOf(peers);
        ports = List.copyOf(ports);
        if (anyPeer != peers.isEmpty()) {
            throw new IllegalArgumentException("anyPeer must be set exactly when peers is empty");
        }
        if (anyPort != ports.isEmpty()) {
            throw new IllegalArgumentException("anyPort must be set exactly when ports is empty");
        }
    }

    /** An invalid Deny or Pass rule (or one whose action is unknown): it denies whatever reaches it. */
    public static ClusterRule denyEverything(int index, String name) {
        return new ClusterRule(index, name, RuleAction.DENY, true, List.of(), true, List.of(), true);
    }

    /** This rule with {@code action} Deny instead, marked as not read as written. */
    public ClusterRule asDeny() {
        return new ClusterRule(index, name, RuleAction.DENY, anyPeer, peers, anyPort, ports, true);
    }

    @Override
    public String toString() {
        return "#" + index + (name == null || name.isEmpty() ? "" : " " + ApiSyntax.quote(name)) + " " + action.apiName()
                + " peers=" + (anyPeer ? "any" : peers) + " ports=" + (anyPort ? "any" : ports)
                + (failedClosed ? " (failed closed)" : "");
    }
}
