package io.npmagent.iptables.model;

import io.npmagent.dataplane.desired.PortMatch;

/**
 * One admitting rule of a policy chain: a peer set (null: any peer) and a port (null: any port, any
 * protocol). A compiled rule becomes one of these per (peer, port) pair.
 *
 * @param index the rule's position in the policy's list, kept for comments and explanations
 */
public record RuleSpec(int index, SetId peers, PortMatch port) {}
