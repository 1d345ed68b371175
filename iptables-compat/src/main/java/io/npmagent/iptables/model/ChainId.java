package io.npmagent.iptables.model;

import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;

/** A chain (iptables) or chain-like object (nft) the model asks for, in one family. */
public sealed interface ChainId {
    Family family();

    /** A policy's rules for one direction: marks (iptables) or accepts (nft) what it admits. */
    record PolicyChain(PolicyKey policy, Direction direction, Family family) implements ChainId {}

    /** A local pod's verdict for one direction: its policies in turn, then drop. */
    record PodChain(PodKey pod, Direction direction, Family family) implements ChainId {}

    /** Sends each local isolated pod's packets of one direction to its pod chain. */
    record Dispatch(Direction direction, Family family) implements ChainId {}
}
