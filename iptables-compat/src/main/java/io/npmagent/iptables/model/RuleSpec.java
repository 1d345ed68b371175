package io.npmagent.iptables.model;

import io.npmagent.dataplane.desired.PortMatch;
import io.npmagent.dataplane.tier.RuleAction;

/**
 * One rule of a policy chain: a peer set (null: any peer), a port (null: any port, any protocol), and
 * what a match does. A NetworkPolicy rule admits ({@code ACCEPT}); a ClusterNetworkPolicy rule accepts,
 * denies or passes. A compiled rule becomes one of these per (peer, port) pair, all with its action, so
 * the first spec that matches is of the first rule that matches.
 *
 * @param index the rule's position in the policy's list, kept for comments and explanations
 */
public record RuleSpec(int index, RuleAction action, SetId peers, PortMatch port) {

    /** A NetworkPolicy rule: it admits what it matches. */
    public RuleSpec(int index, SetId peers, PortMatch port) {
        this(index, RuleAction.ACCEPT, peers, port);
    }
}
