package io.npmagent.dataplane.policy;

import io.npmagent.dataplane.desired.CompiledClusterPolicy;
import io.npmagent.dataplane.desired.CompiledClusterRule;
import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.desired.PortMatch;
import io.npmagent.dataplane.desired.TierPolicies;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.Node;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.model.Tier;
import io.npmagent.dataplane.tier.ClusterPeer;
import io.npmagent.dataplane.tier.ClusterPort;
import io.npmagent.dataplane.tier.ClusterRule;
import io.npmagent.dataplane.tier.NormalizedClusterPolicy;
import io.npmagent.dataplane.tier.TierOrder;
import io.npmagent.dataplane.util.Multimaps;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * The {@link PolicyCompiler}'s ClusterNetworkPolicy half: the policies and Nodes as last seen, which local
 * pods each policy selects, each policy's effective rows, and each pod's tier lists. The compiler owns
 * the rows' change tracking and the peer sets' reference counts; this class only answers.
 *
 * <p>At most a few hundred ClusterNetworkPolicies exist in a cluster (the API is for cluster operators),
 * so a pod's subjects are found by trying each policy, and a Node change recompiles every policy with a
 * {@code nodes} peer.
 */
final class ClusterPolicyTable {
    /** The protocols a named port may be declared with: the API's {@code destinationNamedPort} names none. */
    private static final List<Protocol> NAMED_PORT_PROTOCOLS = List.of(Protocol.TCP, Protocol.UDP, Protocol.SCTP);

    private final Map<String, NormalizedClusterPolicy> policies = new HashMap<>();
    private final Map<String, Node> nodes = new HashMap<>();
    private final Map<String, Set<PodKey>> targets = new HashMap<>();
    private final Map<PodKey, Set<String>> podPolicies = new HashMap<>();

    NormalizedClusterPolicy policy(String name) {
        return policies.get(name);
    }

    /** Records the policy (null: deleted); returns the one it replaces, or null. */
    NormalizedClusterPolicy put(String name, NormalizedClusterPolicy policy) {
        return policy == null ? policies.remove(name) : policies.put(name, policy);
    }

    /** Records the Node (null: deleted); returns the names of the policies whose rows may have changed. */
    List<String> putNode(String name, Node node) {
        Node before = node == null ? nodes.remove(name) : nodes.put(name, node);
        if (before == null ? node == null : before.equals(node)) {
            return List.of();
        }
        List<String> affected = new ArrayList<>();
        policies.forEach((policyName, p) -> {
            if (hasNodePeer(p)) {
                affected.add(policyName);
            }
        });
        return affected;
    }

    private static boolean hasNodePeer(NormalizedClusterPolicy policy) {
        for (Direction d : Direction.values()) {
            for (ClusterRule r : policy.rules(d)) {
                if (r.peers().stream().anyMatch(p -> p instanceof ClusterPeer.Nodes)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The local pods the policy selects. */
    Set<PodKey> targets(String name) {
        return Set.copyOf(targets.getOrDefault(name, Set.of()));
    }

    /** The local pods the policy selects now, and remembers them; returns the ones it selected before. */
    Set<PodKey> retarget(String name, Set<PodKey> now) {
        Set<PodKey> before = targets.getOrDefault(name, Set.of());
        for (PodKey pod : before) {
            if (!now.contains(pod)) {
                Multimaps.remove(podPolicies, pod, name);
            }
        }
        for (PodKey pod : now) {
            Multimaps.add(podPolicies, pod, name);
        }
        if (now.isEmpty()) {
            targets.remove(name);
        } else {
            targets.put(name, new HashSet<>(now));
        }
        return before;
    }

    /** Re-decides which policies select one pod: {@code pod} null, or not a local endpoint, is selected by none. */
    void refreshPod(PodKey key, Pod pod, Namespace namespace) {
        Set<String> before = podPolicies.getOrDefault(key, Set.of());
        Set<String> now = new HashSet<>();
        if (pod != null) {
            policies.forEach((name, p) -> {
                if (p.subject().selects(pod, namespace)) {
                    now.add(name);
                }
            });
        }
        for (String name : before) {
            if (!now.contains(name)) {
                Multimaps.remove(targets, name, key);
            }
        }
        for (String name : now) {
            Multimaps.add(targets, name, key);
        }
        if (now.isEmpty()) {
            podPolicies.remove(key);
        } else {
            podPolicies.put(key, now);
        }
    }

    /**
     * The pod's tier lists: each policy that selects it, in {@link TierOrder}, under each tier it is
     * enforced in, for each direction its row has rules for ({@code rows} gives the row by name).
     */
    TierPolicies tiers(PodKey key, Function<String, CompiledClusterPolicy> rows) {
        Set<String> names = podPolicies.get(key);
        if (names == null) {
            return TierPolicies.NONE;
        }
        List<NormalizedClusterPolicy> ordered = names.stream().map(policies::get).sorted(TierOrder.PRECEDENCE).toList();
        return new TierPolicies(list(ordered, Tier.ADMIN, Direction.INGRESS, rows), list(ordered, Tier.ADMIN, Direction.EGRESS, rows),
                list(ordered, Tier.BASELINE, Direction.INGRESS, rows), list(ordered, Tier.BASELINE, Direction.EGRESS, rows));
    }

    /** The names of {@code ordered} enforced in {@code tier} whose rows have rules for {@code d}, in order. */
    private static List<String> list(List<NormalizedClusterPolicy> ordered, Tier tier, Direction d,
            Function<String, CompiledClusterPolicy> rows) {
        return ordered.stream().filter(p -> p.inTier(tier) && !rows.apply(p.name()).rules(d).isEmpty())
                .map(NormalizedClusterPolicy::name).toList();
    }

    /** The policy's row: its rules with their peers as sets (Nodes as their addresses now) and ports as port matches. */
    CompiledClusterPolicy compile(NormalizedClusterPolicy policy) {
        return new CompiledClusterPolicy(policy.name(), rules(policy.ingress()), rules(policy.egress()));
    }

    private List<CompiledClusterRule> rules(List<ClusterRule> rules) {
        List<CompiledClusterRule> out = new ArrayList<>();
        for (ClusterRule r : rules) {
            TreeSet<PeerSetKey> peers = new TreeSet<>();
            for (ClusterPeer peer : r.peers()) {
                peers.addAll(peerSets(peer));
            }
            if (!r.anyPeer() && peers.isEmpty()) {
                continue; // its peers are Nodes selecting none: it matches nothing, whatever its action
            }
            List<PortMatch> ports = new ArrayList<>();
            for (ClusterPort port : r.ports()) {
                if (port instanceof ClusterPort.Range range) {
                    ports.add(new PortMatch.PortRange(range.protocol(), range.first(), range.last()));
                } else if (port instanceof ClusterPort.Named named) {
                    NAMED_PORT_PROTOCOLS.forEach(p -> ports.add(new PortMatch.NamedPort(p, named.name())));
                }
            }
            out.add(new CompiledClusterRule(r.index(), r.name(), r.action(), r.anyPeer(), List.copyOf(peers), r.anyPort(), ports));
        }
        return out;
    }

    private List<PeerSetKey> peerSets(ClusterPeer peer) {
        if (peer instanceof ClusterPeer.Pods pods) {
            return List.of(PeerSetKey.SelectorPeers.acrossNamespaces(pods.namespaceSelector(), pods.podSelector()));
        }
        if (peer instanceof ClusterPeer.Network network) {
            return List.of(new PeerSetKey.CidrPeers(network.cidr(), List.of()));
        }
        ClusterPeer.Nodes selected = (ClusterPeer.Nodes) peer;
        List<PeerSetKey> out = new ArrayList<>();
        for (Node node : nodes.values()) {
            if (selected.nodeSelector().matches(node.labels())) {
                for (IpAddress ip : node.addresses()) {
                    out.add(new PeerSetKey.CidrPeers(Cidr.host(ip), List.of()));
                }
            }
        }
        return out;
    }
}
