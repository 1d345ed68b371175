package io.npmagent.iptables.model;

import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;

/** A chain (iptables) or chain-like object (nft) the model asks for, in one family. */
public sealed interface ChainId {
    Family family();

    /** A policy's rules for one direction: marks (iptables) or accepts (nft) what it admits. */
    record PolicyChain(PolicyKey policy, Direction direction, Family family) implements ChainId {}

    /**
     * A ClusterNetworkPolicy's rules for one direction, first match deciding: what a rule matches is
     * accepted (this side allows), dropped, or passed on (marked for the pod chain to skip the rest of
     * the tier). Whichever tier it is in: the pod chain says what a Pass means there.
     * {@code policy} is the policy's name: untrusted, only ever hashed into a kernel name.
     */
    record ClusterPolicyChain(String policy, Direction direction, Family family) implements ChainId {}

    /** A local pod's verdict for one direction: its Admin tier, its NetworkPolicies or its Baseline tier, then drop or allow. */
    record PodChain(PodKey pod, Direction direction, Family family) implements ChainId {}

    /** Sends each local isolated pod's packets of one direction to its pod chain. */
    record Dispatch(Direction direction, Family family) implements ChainId {}
}
