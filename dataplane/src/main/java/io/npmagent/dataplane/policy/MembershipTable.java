package io.npmagent.dataplane.policy;

import io.npmagent.dataplane.desired.IdentityId;
import io.npmagent.dataplane.desired.Membership;
import io.npmagent.dataplane.desired.PeerSetKey;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Which identities are in which selector peer set, indexed both ways, with the net membership changes
 * since the last {@link #drain}. Memberships are the most numerous rows, so each is held once per
 * index and the change log holds only what changed.
 */
final class MembershipTable {
    private final Map<PeerSetKey, Set<IdentityId>> bySet = new HashMap<>();
    private final Map<IdentityId, Set<PeerSetKey>> byIdentity = new HashMap<>();
    private final Map<Membership, Boolean> pending = new HashMap<>();

    void add(PeerSetKey set, IdentityId id) {
        if (bySet.computeIfAbsent(set, k -> new HashSet<>()).add(id)) {
            byIdentity.computeIfAbsent(id, k -> new HashSet<>()).add(set);
            record(new Membership(set, id), true);
        }
    }

    void removeSet(PeerSetKey set) {
        Set<IdentityId> ids = bySet.remove(set);
        if (ids == null) {
            return;
        }
        for (IdentityId id : ids) {
            Set<PeerSetKey> sets = byIdentity.get(id);
            sets.remove(set);
            if (sets.isEmpty()) {
                byIdentity.remove(id);
            }
            record(new Membership(set, id), false);
        }
    }

    void removeIdentity(IdentityId id) {
        Set<PeerSetKey> sets = byIdentity.remove(id);
        if (sets == null) {
            return;
        }
        for (PeerSetKey set : sets) {
            Set<IdentityId> ids = bySet.get(set);
            ids.remove(id);
            if (ids.isEmpty()) {
                bySet.remove(set);
            }
            record(new Membership(set, id), false);
        }
    }

    Set<IdentityId> members(PeerSetKey set) {
        return bySet.getOrDefault(set, Set.of());
    }

    private void record(Membership m, boolean present) {
        Boolean was = pending.get(m);
        if (was != null && was != present) {
            pending.remove(m); // back to how it was at the last drain
        } else {
            pending.put(m, present);
        }
    }

    Map<Membership, Boolean> drain() {
        Map<Membership, Boolean> out = new HashMap<>(pending);
        pending.clear();
        return out;
    }
}
