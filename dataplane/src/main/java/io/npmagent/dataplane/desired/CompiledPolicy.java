package io.npmagent.dataplane.desired;

import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.PolicyKey;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * A policy in effective form: the directions it isolates (policyTypes after defaulting) and, for each,
 * its valid rules. Which pods it applies to is not here: {@link LocalPod} lists the policies of each
 * local pod, so a policy edit that changes only rules touches no pod.
 */
public record CompiledPolicy(PolicyKey key, Set<Direction> directions, List<CompiledRule> ingress, List<CompiledRule> egress) {

    public CompiledPolicy {
        directions = Collections.unmodifiableSet(directions.isEmpty() ? EnumSet.noneOf(Direction.class) : EnumSet.copyOf(directions));
        ingress = List.copyOf(ingress);
        egress = List.copyOf(egress);
    }

    public boolean isolates(Direction direction) {
        return directions.contains(direction);
    }

    public List<CompiledRule> rules(Direction direction) {
        return direction == Direction.INGRESS ? ingress : egress;
    }

    /** Every peer set a rule of this policy names, in a stable order. */
    public SortedSet<PeerSetKey> peerSets() {
        SortedSet<PeerSetKey> keys = new TreeSet<>();
        List<CompiledRule> all = new ArrayList<>(ingress);
        all.addAll(egress);
        for (CompiledRule r : all) {
            keys.addAll(r.peers());
        }
        return keys;
    }
}
