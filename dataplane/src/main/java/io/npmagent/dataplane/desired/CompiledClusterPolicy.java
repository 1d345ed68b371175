package io.npmagent.dataplane.desired;

import io.npmagent.dataplane.model.Direction;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * A ClusterNetworkPolicy in effective form: its rules per direction, in the order they are tried. Its
 * tier and priority are not here: {@link LocalPod#tiers()} lists each local pod's ClusterNetworkPolicies
 * per tier in the order they are tried, so a priority edit changes pod rows and a rules edit changes
 * only this row, each a diff like a NetworkPolicy edit.
 */
public record CompiledClusterPolicy(String name, List<CompiledClusterRule> ingress, List<CompiledClusterRule> egress) {

    public CompiledClusterPolicy {
        Objects.requireNonNull(name, "name");
        ingress = List.copyOf(ingress);
        egress = List.copyOf(egress);
    }

    public List<CompiledClusterRule> rules(Direction direction) {
        return direction == Direction.INGRESS ? ingress : egress;
    }

    /** Every peer set a rule of this policy names, in a stable order. */
    public SortedSet<PeerSetKey> peerSets() {
        SortedSet<PeerSetKey> keys = new TreeSet<>();
        List<CompiledClusterRule> all = new ArrayList<>(ingress);
        all.addAll(egress);
        for (CompiledClusterRule r : all) {
            keys.addAll(r.peers());
        }
        return keys;
    }
}
