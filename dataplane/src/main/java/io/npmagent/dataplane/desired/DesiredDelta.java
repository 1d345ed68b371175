package io.npmagent.dataplane.desired;

import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * What changed in the {@link DesiredState}: for each kind of row, the keys whose row was created,
 * changed or removed, with the row before and after ({@link Change}); for sets and members, {@code true}
 * (now present, so absent before) or {@code false} (now absent, so present before). Only real changes
 * appear: a key whose row ended as it began is left out.
 *
 * <p>Applying a delta part by part needs an order so that no rule ever names a missing set: identities,
 * addresses, peer sets and members that appear go first, then pods, then policies and
 * ClusterNetworkPolicies (a pod naming a policy not yet held fails closed); removals go last. The batch layer owns that order
 * ({@code Batch#units}); a delta is only the facts.
 */
public record DesiredDelta(
        Map<IdentityId, Change<Identity>> identities,
        Map<IpAddress, Change<IdentityId>> addresses,
        Map<PeerSetKey, Boolean> peerSets,
        Map<Membership, Boolean> members,
        Map<PolicyKey, Change<CompiledPolicy>> policies,
        Map<String, Change<CompiledClusterPolicy>> clusterPolicies,
        Map<PodKey, Change<LocalPod>> pods) {

    public static final DesiredDelta EMPTY =
            new DesiredDelta(Map.of(), Map.of(), Map.of(), Map.of(), Map.of(), Map.of(), Map.of());

    /** A delta without ClusterNetworkPolicy changes. */
    public DesiredDelta(
            Map<IdentityId, Change<Identity>> identities,
            Map<IpAddress, Change<IdentityId>> addresses,
            Map<PeerSetKey, Boolean> peerSets,
            Map<Membership, Boolean> members,
            Map<PolicyKey, Change<CompiledPolicy>> policies,
            Map<PodKey, Change<LocalPod>> pods) {
        this(identities, addresses, peerSets, members, policies, Map.of(), pods);
    }

    public DesiredDelta {
        identities = frozen(identities);
        addresses = frozen(addresses);
        peerSets = frozen(peerSets);
        members = frozen(members);
        policies = frozen(policies);
        clusterPolicies = frozen(clusterPolicies);
        pods = frozen(pods);
    }

    private static <K, V> Map<K, V> frozen(Map<K, V> m) {
        return m.isEmpty() ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(m));
    }

    /**
     * The whole of {@code state} as additions to nothing: the first batch after a start, which a
     * backend holding an earlier run's state adopts by writing only what differs.
     */
    public static DesiredDelta of(DesiredState state) {
        Map<Membership, Boolean> members = new HashMap<>();
        Map<PeerSetKey, Boolean> sets = new HashMap<>();
        state.peerSets().forEach((set, ids) -> {
            sets.put(set, true);
            ids.forEach(id -> members.put(new Membership(set, id), true));
        });
        return new DesiredDelta(added(state.identities()), added(state.addresses()), sets, members,
                added(state.policies()), added(state.clusterPolicies()), added(state.pods()));
    }

    private static <K, V> Map<K, Change<V>> added(Map<K, V> rows) {
        Map<K, Change<V>> out = new HashMap<>();
        rows.forEach((k, v) -> out.put(k, new Change<>(null, v)));
        return out;
    }

    /** The delta that undoes this one: every change reversed, every flag flipped back. */
    public DesiredDelta inverse() {
        return new DesiredDelta(
                inverted(identities), inverted(addresses), negated(peerSets), negated(members), inverted(policies),
                inverted(clusterPolicies), inverted(pods));
    }

    private static <K, V> Map<K, Change<V>> inverted(Map<K, Change<V>> m) {
        Map<K, Change<V>> out = new HashMap<>();
        m.forEach((k, c) -> out.put(k, c.inverse()));
        return out;
    }

    private static <K> Map<K, Boolean> negated(Map<K, Boolean> m) {
        Map<K, Boolean> out = new HashMap<>();
        m.forEach((k, present) -> out.put(k, !present));
        return out;
    }

    public boolean isEmpty() {
        return size() == 0;
    }

    /** Number of changed rows of all kinds. */
    public int size() {
        return identities.size() + addresses.size() + peerSets.size() + members.size() + policies.size() + clusterPolicies.size()
                + pods.size();
    }

    @Override
    public String toString() {
        return "DesiredDelta{identities=" + identities.size() + ", addresses=" + addresses.size()
                + ", peerSets=" + peerSets.size() + ", members=" + members.size()
                + ", policies=" + policies.size() + ", clusterPolicies=" + clusterPolicies.size() + ", pods=" + pods.size() + "}";
    }
}
