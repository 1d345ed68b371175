package io.npmagent.dataplane.backend;

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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The changes one backend call applies as one transaction: a coalesced {@link DesiredDelta}.
 *
 * <p><b>Order.</b> {@link #units()} is the one place that decides the order of a batch's parts when
 * they must be applied one by one (after the whole batch failed): things that appear or change go
 * first, dependencies before dependents (addresses and identities, then peer sets with their
 * members, then pods, then NetworkPolicies, then ClusterNetworkPolicies); things that disappear go
 * last (pods, then NetworkPolicies, then ClusterNetworkPolicies, then sets, then addresses). So at every step no rule names a missing set. A pod may name a policy not held
 * yet: every backend isolates it without that policy's allows until the policy lands (fail closed;
 * a ClusterNetworkPolicy not held denies whatever reaches its place in the tier),
 * and a policy's own refusal is reported as the policy's, not as the pod's that reaches it (the
 * netfilter backends write a policy's chain only once a local pod jumps to it).
 */
public record Batch(DesiredDelta delta) {

    public boolean isEmpty() {
        return delta.isEmpty();
    }

    /** NetworkPolicy and ClusterNetworkPolicy changes in this batch (what {@code MaxPendingNetPols} counts). */
    public int policyChanges() {
        return delta.policies().size() + delta.clusterPolicies().size();
    }

    /** The part of a batch a failure can be isolated to, and the object it is about. */
    public sealed interface UnitKey {
        /** Every {@link #kind()}, in the order metrics list them. */
        List<String> KINDS = List.of("addresses", "peerset", "policy", "clusterpolicy", "pod");

        /** For metrics: addresses, peerset, policy, clusterpolicy, pod. */
        String kind();

        /** Identities and the address table (one part: they are rarely rejected on their own). */
        record Addresses() implements UnitKey {
            @Override
            public String kind() {
                return "addresses";
            }

            @Override
            public String toString() {
                return "addresses";
            }
        }

        record PeerSet(PeerSetKey set) implements UnitKey {
            @Override
            public String kind() {
                return "peerset";
            }

            @Override
            public String toString() {
                return "peer set " + set.canonical();
            }
        }

        record Policy(PolicyKey policy) implements UnitKey {
            @Override
            public String kind() {
                return "policy";
            }

            @Override
            public String toString() {
                return "NetworkPolicy " + policy;
            }
        }

        record ClusterPolicy(String name) implements UnitKey {
            @Override
            public String kind() {
                return "clusterpolicy";
            }

            @Override
            public String toString() {
                return "ClusterNetworkPolicy " + name;
            }
        }

        record Pod(PodKey pod) implements UnitKey {
            @Override
            public String kind() {
                return "pod";
            }

            @Override
            public String toString() {
                return "Pod " + pod;
            }
        }

        UnitKey ADDRESSES = new Addresses();
    }

    /** One part of a batch: every change about one object, all additions or all removals. */
    public record Unit(UnitKey key, boolean removal, Batch batch) {}

    /** The parts of this batch in the order they must be applied when applied one by one. */
    public List<Unit> units() {
        Parts adds = new Parts();
        Parts removals = new Parts();
        delta.identities().forEach((k, c) -> (c.isRemoval() ? removals : adds).addresses.identities.put(k, c));
        delta.addresses().forEach((k, c) -> (c.isRemoval() ? removals : adds).addresses.addresses.put(k, c));
        delta.peerSets().forEach((k, present) -> (present ? adds : removals).set(k).peerSets.put(k, present));
        delta.members().forEach((m, present) -> {
            // A member change belongs with its set: with the set's removal if the set goes.
            boolean setGoes = Boolean.FALSE.equals(delta.peerSets().get(m.set()));
            (setGoes ? removals : adds).set(m.set()).members.put(m, present);
        });
        delta.policies().forEach((k, c) -> (c.isRemoval() ? removals : adds).policy(k).policies.put(k, c));
        delta.clusterPolicies().forEach((k, c) -> (c.isRemoval() ? removals : adds).clusterPolicy(k).clusterPolicies.put(k, c));
        delta.pods().forEach((k, c) -> (c.isRemoval() ? removals : adds).pod(k).pods.put(k, c));

        List<Unit> units = new ArrayList<>();
        adds.addressesUnit(false).ifPresent(units::add);
        adds.sets.forEach((k, p) -> units.add(p.unit(new UnitKey.PeerSet(k), false)));
        adds.pods.forEach((k, p) -> units.add(p.unit(new UnitKey.Pod(k), false)));
        adds.policies.forEach((k, p) -> units.add(p.unit(new UnitKey.Policy(k), false)));
        adds.clusterPolicies.forEach((k, p) -> units.add(p.unit(new UnitKey.ClusterPolicy(k), false)));
        removals.pods.forEach((k, p) -> units.add(p.unit(new UnitKey.Pod(k), true)));
        removals.policies.forEach((k, p) -> units.add(p.unit(new UnitKey.Policy(k), true)));
        removals.clusterPolicies.forEach((k, p) -> units.add(p.unit(new UnitKey.ClusterPolicy(k), true)));
        removals.sets.forEach((k, p) -> units.add(p.unit(new UnitKey.PeerSet(k), true)));
        removals.addressesUnit(true).ifPresent(units::add);
        return units;
    }

    /** Builds the parts of one phase (additions or removals), each object's changes together. */
    private static final class Parts {
        final Part addresses = new Part();
        final TreeMap<PeerSetKey, Part> sets = new TreeMap<>();
        final TreeMap<PolicyKey, Part> policies = new TreeMap<>();
        final TreeMap<String, Part> clusterPolicies = new TreeMap<>();
        final TreeMap<PodKey, Part> pods = new TreeMap<>();

        Part clusterPolicy(String k) {
            return clusterPolicies.computeIfAbsent(k, x -> new Part());
        }

        Part set(PeerSetKey k) {
            return sets.computeIfAbsent(k, x -> new Part());
        }

        Part policy(PolicyKey k) {
            return policies.computeIfAbsent(k, x -> new Part());
        }

        Part pod(PodKey k) {
            return pods.computeIfAbsent(k, x -> new Part());
        }

        Optional<Unit> addressesUnit(boolean removal) {
            return addresses.identities.isEmpty() && addresses.addresses.isEmpty()
                    ? Optional.empty()
                    : Optional.of(addresses.unit(UnitKey.ADDRESSES, removal));
        }
    }

    private static final class Part {
        final Map<IdentityId, Change<Identity>> identities = new HashMap<>();
        final Map<IpAddress, Change<IdentityId>> addresses = new HashMap<>();
        final Map<PeerSetKey, Boolean> peerSets = new HashMap<>();
        final Map<Membership, Boolean> members = new HashMap<>();
        final Map<PolicyKey, Change<CompiledPolicy>> policies = new HashMap<>();
        final Map<String, Change<CompiledClusterPolicy>> clusterPolicies = new HashMap<>();
        final Map<PodKey, Change<LocalPod>> pods = new HashMap<>();

        Unit unit(UnitKey key, boolean removal) {
            return new Unit(key, removal,
                    new Batch(new DesiredDelta(identities, addresses, peerSets, members, policies, clusterPolicies, pods)));
        }
    }
}
