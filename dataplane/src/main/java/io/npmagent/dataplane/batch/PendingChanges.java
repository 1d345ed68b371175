package io.npmagent.dataplane.batch;

import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.desired.Change;
import io.npmagent.dataplane.desired.CompiledClusterPolicy;
import io.npmagent.dataplane.desired.CompiledPolicy;
import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.desired.Identity;
import io.npmagent.dataplane.desired.IdentityId;
import io.npmagent.dataplane.desired.LocalPod;
import io.npmagent.dataplane.desired.Membership;
import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The coalesced changes waiting to be applied, one per key. Merging a newer change keeps the oldest
 * {@code before} and the newest {@code after}, so a row changed and changed back, or added and deleted
 * before it was ever applied, simply disappears; a set or member flag flipped twice likewise. Not
 * thread-safe: the queue guards it.
 *
 * <p>A delta that arrives while nothing waits is held as it came ({@link #alone}) and handed on whole if
 * nothing joins it before the flush: the first whole state after a start (every row of 100,000 pods) is
 * then neither copied into these maps nor copied out again.
 */
final class PendingChanges {
    /** The only change waiting, as it came (the maps below are empty then); null when the maps hold it all. */
    private DesiredDelta alone;

    private final Map<IdentityId, Change<Identity>> identities = new HashMap<>();
    private final Map<IpAddress, Change<IdentityId>> addresses = new HashMap<>();
    private final Map<PeerSetKey, Boolean> peerSets = new HashMap<>();
    private final Map<Membership, Boolean> members = new HashMap<>();
    private final Map<PolicyKey, Change<CompiledPolicy>> policies = new HashMap<>();
    private final Map<String, Change<CompiledClusterPolicy>> clusterPolicies = new HashMap<>();
    private final Map<PodKey, Change<LocalPod>> pods = new HashMap<>();

    /** Adds changes that happened after everything pending. */
    void addNewer(DesiredDelta d) {
        if (isEmpty()) {
            alone = d;
            return;
        }
        spill();
        merge(d, true);
    }

    /** Puts back changes that happened before everything pending (a refused part of a batch). */
    void addOlder(DesiredDelta d) {
        spill();
        merge(d, false);
    }

    private void merge(DesiredDelta d, boolean newer) {
        rows(identities, d.identities(), newer);
        rows(addresses, d.addresses(), newer);
        flags(peerSets, d.peerSets());
        flags(members, d.members());
        rows(policies, d.policies(), newer);
        rows(clusterPolicies, d.clusterPolicies(), newer);
        rows(pods, d.pods(), newer);
    }

    /** Moves a delta held as it came into the maps, where others can join it. */
    private void spill() {
        if (alone != null) {
            DesiredDelta d = alone;
            alone = null;
            merge(d, true); // the maps are empty: a plain copy
        }
    }

    private static <K, V> void rows(Map<K, Change<V>> pending, Map<K, Change<V>> incoming, boolean newer) {
        incoming.forEach((k, c) -> {
            Change<V> there = pending.get(k);
            Change<V> combined = there == null ? c : newer ? there.then(c) : c.then(there);
            if (combined == null) {
                pending.remove(k);
            } else {
                pending.put(k, combined);
            }
        });
    }

    /** A flag can only flip: two pending flips of one flag cancel, whichever came first. */
    private static <K> void flags(Map<K, Boolean> pending, Map<K, Boolean> incoming) {
        incoming.forEach((k, present) -> {
            Boolean there = pending.get(k);
            if (there == null) {
                pending.put(k, present);
            } else if (there.equals(present)) {
                throw new IllegalStateException(k + " flipped to " + present + " twice: changes arrived out of order");
            } else {
                pending.remove(k);
            }
        });
    }

    boolean isEmpty() {
        return alone == null && identities.isEmpty() && addresses.isEmpty() && peerSets.isEmpty() && members.isEmpty()
                && policies.isEmpty() && clusterPolicies.isEmpty() && pods.isEmpty();
    }

    /** Policies (NetworkPolicies and ClusterNetworkPolicies) waiting, due or not. */
    int policyCount() {
        return alone != null ? alone.policies().size() + alone.clusterPolicies().size() : policies.size() + clusterPolicies.size();
    }

    /** Policy changes (of both kinds) waiting whose part is due (not waiting out a retry delay). */
    int policies(Predicate<Batch.UnitKey> due) {
        int n = 0;
        for (PolicyKey k : alone != null ? alone.policies().keySet() : policies.keySet()) {
            if (due.test(new Batch.UnitKey.Policy(k))) {
                n++;
            }
        }
        for (String k : alone != null ? alone.clusterPolicies().keySet() : clusterPolicies.keySet()) {
            if (due.test(new Batch.UnitKey.ClusterPolicy(k))) {
                n++;
            }
        }
        return n;
    }

    /** Whether any key {@code d} changes is still waiting here. */
    boolean holdsAnyOf(DesiredDelta d) {
        spill();
        return d.identities().keySet().stream().anyMatch(identities::containsKey)
                || d.addresses().keySet().stream().anyMatch(addresses::containsKey)
                || d.peerSets().keySet().stream().anyMatch(peerSets::containsKey)
                || d.members().keySet().stream().anyMatch(members::containsKey)
                || d.policies().keySet().stream().anyMatch(policies::containsKey)
                || d.clusterPolicies().keySet().stream().anyMatch(clusterPolicies::containsKey)
                || d.pods().keySet().stream().anyMatch(pods::containsKey);
    }

    /** Whether any change of {@code unit} waits here. */
    boolean holds(Batch.UnitKey unit) {
        spill();
        if (unit instanceof Batch.UnitKey.Policy p) {
            return policies.containsKey(p.policy());
        }
        if (unit instanceof Batch.UnitKey.ClusterPolicy p) {
            return clusterPolicies.containsKey(p.name());
        }
        if (unit instanceof Batch.UnitKey.Pod p) {
            return pods.containsKey(p.pod());
        }
        if (unit instanceof Batch.UnitKey.PeerSet s) {
            return peerSets.containsKey(s.set()) || members.keySet().stream().anyMatch(m -> m.set().equals(s.set()));
        }
        return !identities.isEmpty() || !addresses.isEmpty();
    }

    /** Removes and returns every change (none waits out a retry delay): no key tested, none copied one by one. */
    DesiredDelta takeAll() {
        if (alone != null) {
            DesiredDelta d = alone;
            alone = null;
            return d;
        }
        DesiredDelta all = new DesiredDelta(identities, addresses, peerSets, members, policies, clusterPolicies, pods); // copies them
        identities.clear();
        addresses.clear();
        peerSets.clear();
        members.clear();
        policies.clear();
        clusterPolicies.clear();
        pods.clear();
        return all;
    }

    /** Removes and returns every change whose part is due. */
    DesiredDelta takeDue(Predicate<Batch.UnitKey> due) {
        spill();
        return new DesiredDelta(
                take(identities, k -> Batch.UnitKey.ADDRESSES, due),
                take(addresses, k -> Batch.UnitKey.ADDRESSES, due),
                take(peerSets, Batch.UnitKey.PeerSet::new, due),
                take(members, m -> new Batch.UnitKey.PeerSet(m.set()), due),
                take(policies, Batch.UnitKey.Policy::new, due),
                take(clusterPolicies, Batch.UnitKey.ClusterPolicy::new, due),
                take(pods, Batch.UnitKey.Pod::new, due));
    }

    private static <K, V> Map<K, V> take(Map<K, V> pending, Function<K, Batch.UnitKey> unit, Predicate<Batch.UnitKey> due) {
        Map<K, V> out = new HashMap<>();
        for (Iterator<Map.Entry<K, V>> it = pending.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<K, V> e = it.next();
            if (due.test(unit.apply(e.getKey()))) {
                out.put(e.getKey(), e.getValue());
                it.remove();
            }
        }
        return out;
    }
}
