package io.npmagent.dataplane.desired;

import io.npmagent.dataplane.model.ApiSyntax;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Tier;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The backend-neutral state a node should enforce, as rows a backend renders without knowing
 * NetworkPolicy semantics:
 * <ul>
 *   <li>{@code identities}: identity number to what it stands for;</li>
 *   <li>{@code addresses}: every pod address in the cluster to the identity of the pod that owns it
 *       (an ipcache; external addresses are absent);</li>
 *   <li>{@code peerSets}: each set a rule names, with its member identities (CIDR sets have none:
 *       their key says which addresses they hold);</li>
 *   <li>{@code policies}: each policy's rules;</li>
 *   <li>{@code clusterPolicies}: each ClusterNetworkPolicy's rules, with their actions;</li>
 *   <li>{@code pods}: each local pod with the policies that isolate it per direction, and the
 *       ClusterNetworkPolicies that select it per tier and direction, in order ({@link TierPolicies}).</li>
 * </ul>
 * An iptables backend renders sets as ipsets of the members' addresses (hash:net with nomatch for
 * except) and policies as chains; an eBPF backend renders the addresses as an LPM ipcache and each
 * pod's policies as a map keyed by identity and port. A packet from S to D on port P is allowed when
 * the egress side (judged at S if it is a local pod) and the ingress side (judged at D) both allow it. A
 * side walks S's Admin list (the first matching Accept or Deny rule decides; a Pass skips the rest of
 * the list), then, if NetworkPolicies isolate it, decides by them (D admitted by a rule of one of
 * them, or dropped), then walks the Baseline list likewise, then allows.
 *
 * <p>Immutable. {@link #apply} returns the state after a delta, which is how tests and fakes follow the
 * compiler; {@link #inconsistencies} lists broken references (a rule naming a missing set...), which a
 * delta applied in the documented order must never produce.
 */
public record DesiredState(
        SortedMap<IdentityId, Identity> identities,
        SortedMap<IpAddress, IdentityId> addresses,
        SortedMap<PeerSetKey, SortedSet<IdentityId>> peerSets,
        SortedMap<PolicyKey, CompiledPolicy> policies,
        SortedMap<String, CompiledClusterPolicy> clusterPolicies,
        SortedMap<PodKey, LocalPod> pods) {

    public static final DesiredState EMPTY = new DesiredState(
            new TreeMap<>(), new TreeMap<>(), new TreeMap<>(), new TreeMap<>(), new TreeMap<>(), new TreeMap<>());

    /** A state without ClusterNetworkPolicies. */
    public DesiredState(
            SortedMap<IdentityId, Identity> identities,
            SortedMap<IpAddress, IdentityId> addresses,
            SortedMap<PeerSetKey, SortedSet<IdentityId>> peerSets,
            SortedMap<PolicyKey, CompiledPolicy> policies,
            SortedMap<PodKey, LocalPod> pods) {
        this(identities, addresses, peerSets, policies, new TreeMap<>(), pods);
    }

    public DesiredState {
        identities = Collections.unmodifiableSortedMap(new TreeMap<>(identities));
        addresses = Collections.unmodifiableSortedMap(new TreeMap<>(addresses));
        TreeMap<PeerSetKey, SortedSet<IdentityId>> sets = new TreeMap<>();
        peerSets.forEach((k, v) -> sets.put(k, Collections.unmodifiableSortedSet(new TreeSet<>(v))));
        peerSets = Collections.unmodifiableSortedMap(sets);
        policies = Collections.unmodifiableSortedMap(new TreeMap<>(policies));
        clusterPolicies = Collections.unmodifiableSortedMap(new TreeMap<>(clusterPolicies));
        pods = Collections.unmodifiableSortedMap(new TreeMap<>(pods));
    }

    public DesiredState apply(DesiredDelta delta) {
        TreeMap<IdentityId, Identity> ids = new TreeMap<>(identities);
        TreeMap<IpAddress, IdentityId> addrs = new TreeMap<>(addresses);
        TreeMap<PeerSetKey, SortedSet<IdentityId>> sets = new TreeMap<>();
        peerSets.forEach((k, v) -> sets.put(k, new TreeSet<>(v)));
        TreeMap<PolicyKey, CompiledPolicy> pols = new TreeMap<>(policies);
        TreeMap<String, CompiledClusterPolicy> clusterPols = new TreeMap<>(clusterPolicies);
        TreeMap<PodKey, LocalPod> localPods = new TreeMap<>(pods);

        putAll(ids, delta.identities());
        putAll(addrs, delta.addresses());
        delta.peerSets().forEach((k, present) -> {
            if (present) {
                sets.putIfAbsent(k, new TreeSet<>());
            } else {
                sets.remove(k);
            }
        });
        delta.members().forEach((m, present) -> {
            SortedSet<IdentityId> members = sets.get(m.set());
            if (present) {
                if (members == null) {
                    throw new IllegalStateException("member " + m.identity() + " added to missing set " + m.set());
                }
                members.add(m.identity());
            } else if (members != null) {
                members.remove(m.identity());
            }
        });
        putAll(pols, delta.policies());
        putAll(clusterPols, delta.clusterPolicies());
        putAll(localPods, delta.pods());
        return new DesiredState(ids, addrs, sets, pols, clusterPols, localPods);
    }

    private static <K, V> void putAll(Map<K, V> target, Map<K, Change<V>> changes) {
        changes.forEach((k, c) -> {
            if (c.isRemoval()) {
                target.remove(k);
            } else {
                target.put(k, c.after());
            }
        });
    }

    /** The local pod that owns {@code ip}, if any. */
    public Optional<LocalPod> localPodAt(IpAddress ip) {
        for (LocalPod p : pods.values()) {
            if (p.ips().contains(ip)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    /** Broken references, as text; empty when every name resolves. */
    public List<String> inconsistencies() {
        List<String> problems = new ArrayList<>();
        addresses.forEach((ip, id) -> {
            if (!identities.containsKey(id)) {
                problems.add("address " + ip + " names missing identity " + id);
            }
        });
        peerSets.forEach((set, members) -> {
            for (IdentityId id : members) {
                if (!identities.containsKey(id)) {
                    problems.add("set " + set + " holds missing identity " + id);
                }
            }
            if (set instanceof PeerSetKey.CidrPeers && !members.isEmpty()) {
                problems.add("CIDR set " + set + " has identity members");
            }
        });
        policies.forEach((key, policy) -> {
            for (PeerSetKey set : policy.peerSets()) {
                if (!peerSets.containsKey(set)) {
                    problems.add("policy " + key + " names missing set " + set);
                }
            }
        });
        clusterPolicies.forEach((name, policy) -> {
            for (PeerSetKey set : policy.peerSets()) {
                if (!peerSets.containsKey(set)) {
                    problems.add("ClusterNetworkPolicy " + name + " names missing set " + set);
                }
            }
        });
        pods.forEach((key, pod) -> {
            for (Tier tier : CLUSTER_TIERS) {
                for (Direction d : Direction.values()) {
                    for (String name : pod.tiers().of(tier, d)) {
                        CompiledClusterPolicy policy = clusterPolicies.get(name);
                        if (policy == null) {
                            problems.add("pod " + key + " names missing ClusterNetworkPolicy " + name);
                        } else if (policy.rules(d).isEmpty()) {
                            problems.add("pod " + key + " lists ClusterNetworkPolicy " + name + " for " + d + " where it has no rules");
                        }
                    }
                }
            }
            if (!identities.containsKey(pod.identity())) {
                problems.add("pod " + key + " has missing identity " + pod.identity());
            }
            for (IpAddress ip : pod.ips()) {
                if (!pod.identity().equals(addresses.get(ip))) {
                    problems.add("pod " + key + " address " + ip + " is not mapped to its identity");
                }
            }
            for (Direction d : Direction.values()) {
                for (PolicyKey p : pod.policies(d)) {
                    CompiledPolicy policy = policies.get(p);
                    if (policy == null) {
                        problems.add("pod " + key + " names missing policy " + p);
                    } else if (!policy.isolates(d)) {
                        problems.add("pod " + key + " lists " + p + " for " + d + " which it does not isolate");
                    }
                }
            }
        });
        Set<PeerSetKey> referenced = new TreeSet<>();
        policies.values().forEach(p -> referenced.addAll(p.peerSets()));
        clusterPolicies.values().forEach(p -> referenced.addAll(p.peerSets()));
        for (PeerSetKey set : peerSets.keySet()) {
            if (!referenced.contains(set)) {
                problems.add("set " + set + " is named by no policy");
            }
        }
        Set<IdentityId> used = new TreeSet<>(addresses.values());
        for (IdentityId id : identities.keySet()) {
            if (!used.contains(id)) {
                problems.add("identity " + id + " has no address");
            }
        }
        return problems;
    }

    /**
     * A stable, human-readable listing (the {@code npm-agent compile} output and golden files). One row
     * per line whatever the labels hold: control characters in untrusted text are escaped.
     */
    public String dump() {
        StringBuilder sb = new StringBuilder();
        sb.append("identities:\n");
        identities.forEach((id, identity) -> row(sb, id + ": ns=" + identity.namespace()
                + " labels=" + new TreeMap<>(identity.podLabels())
                + (identity.namedPorts().isEmpty() ? "" : " namedPorts=" + sortedPorts(identity))));
        sb.append("addresses:\n");
        addresses.forEach((ip, id) -> row(sb, ip + " -> " + id));
        sb.append("peerSets:\n");
        peerSets.forEach((set, members) -> row(sb, set.canonical()
                + (set instanceof PeerSetKey.CidrPeers ? "" : " members=" + members)));
        sb.append("policies:\n");
        policies.forEach((key, policy) -> {
            row(sb, key + " isolates " + policy.directions());
            for (Direction d : Direction.values()) {
                for (CompiledRule r : policy.rules(d)) {
                    row(sb, "  " + d.apiName().toLowerCase() + " " + r);
                }
            }
        });
        if (!clusterPolicies.isEmpty()) {
            sb.append("clusterPolicies:\n");
            clusterPolicies.forEach((name, policy) -> {
                row(sb, name);
                for (Direction d : Direction.values()) {
                    for (CompiledClusterRule r : policy.rules(d)) {
                        row(sb, "  " + d.apiName().toLowerCase() + " " + r);
                    }
                }
            });
        }
        sb.append("pods:\n");
        pods.forEach((key, pod) -> row(sb, key + " " + pod.ips() + " identity=" + pod.identity()
                + " ingress=" + (pod.isolated(Direction.INGRESS) ? pod.ingressPolicies() : "open")
                + " egress=" + (pod.isolated(Direction.EGRESS) ? pod.egressPolicies() : "open")
                + (pod.tiers().isEmpty() ? "" : " " + pod.tiers())));
        return sb.toString();
    }

    private static final List<Tier> CLUSTER_TIERS = List.of(Tier.ADMIN, Tier.BASELINE);

    private static void row(StringBuilder sb, String text) {
        sb.append("  ").append(ApiSyntax.escapeControls(text)).append('\n');
    }

    private static String sortedPorts(Identity identity) {
        TreeMap<String, Integer> ports = new TreeMap<>();
        identity.namedPorts().forEach((k, v) -> ports.put(k.toString(), v));
        return ports.toString();
    }
}
