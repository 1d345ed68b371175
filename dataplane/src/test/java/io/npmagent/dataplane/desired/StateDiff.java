package io.npmagent.dataplane.desired;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * The delta between two desired states, row by row, as the compiler would emit it: for tests that build
 * states by hand (ClusterNetworkPolicy rows before the compiler emits them, fail-closed states the
 * compiler never makes). {@code before.apply(between(before, after))} equals {@code after}.
 */
public final class StateDiff {
    private StateDiff() {}

    public static DesiredDelta between(DesiredState before, DesiredState after) {
        Map<PeerSetKey, Boolean> sets = new HashMap<>();
        Map<Membership, Boolean> members = new HashMap<>();
        Set<PeerSetKey> keys = new TreeSet<>(before.peerSets().keySet());
        keys.addAll(after.peerSets().keySet());
        for (PeerSetKey k : keys) {
            SortedSet<IdentityId> was = before.peerSets().get(k);
            SortedSet<IdentityId> now = after.peerSets().get(k);
            if ((was == null) != (now == null)) {
                sets.put(k, now != null);
            }
            Set<IdentityId> ids = new TreeSet<>();
            if (was != null) {
                ids.addAll(was);
            }
            if (now != null) {
                ids.addAll(now);
            }
            for (IdentityId id : ids) {
                boolean in = now != null && now.contains(id);
                if ((was != null && was.contains(id)) != in) {
                    members.put(new Membership(k, id), in);
                }
            }
        }
        return new DesiredDelta(rows(before.identities(), after.identities()), rows(before.addresses(), after.addresses()), sets,
                members, rows(before.policies(), after.policies()), rows(before.clusterPolicies(), after.clusterPolicies()),
                rows(before.pods(), after.pods()));
    }

    private static <K, V> Map<K, Change<V>> rows(Map<K, V> before, Map<K, V> after) {
        Map<K, Change<V>> out = new HashMap<>();
        before.forEach((k, v) -> {
            if (!Objects.equals(v, after.get(k))) {
                out.put(k, new Change<>(v, after.get(k)));
            }
        });
        after.forEach((k, v) -> {
            if (!before.containsKey(k)) {
                out.put(k, new Change<>(null, v));
            }
        });
        return out;
    }
}
