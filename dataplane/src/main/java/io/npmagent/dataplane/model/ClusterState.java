package io.npmagent.dataplane.model;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * An immutable snapshot of everything the agent knows about the cluster: what the reference evaluator
 * judges and what a from-scratch compile starts from. Updated by {@link #apply}, which returns a new
 * snapshot.
 *
 * @param clusterPolicies ClusterNetworkPolicies by name (they are cluster-scoped)
 * @param nodes           nodes by name: what ClusterNetworkPolicy {@code nodes} peers match
 */
public record ClusterState(
        SortedMap<String, Namespace> namespaces,
        SortedMap<PodKey, Pod> pods,
        SortedMap<PolicyKey, NetworkPolicy> policies,
        SortedMap<String, ClusterNetworkPolicy> clusterPolicies,
        SortedMap<String, Node> nodes) {

    public static final ClusterState EMPTY = new ClusterState(new TreeMap<>(), new TreeMap<>(), new TreeMap<>());

    public ClusterState {
        namespaces = Collections.unmodifiableSortedMap(new TreeMap<>(namespaces));
        pods = Collections.unmodifiableSortedMap(new TreeMap<>(pods));
        policies = Collections.unmodifiableSortedMap(new TreeMap<>(policies));
        clusterPolicies = Collections.unmodifiableSortedMap(new TreeMap<>(clusterPolicies));
        nodes = Collections.unmodifiableSortedMap(new TreeMap<>(nodes));
    }

    /** A cluster of namespaces, pods and NetworkPolicies only: no ClusterNetworkPolicies, no nodes. */
    public ClusterState(
            SortedMap<String, Namespace> namespaces, SortedMap<PodKey, Pod> pods, SortedMap<PolicyKey, NetworkPolicy> policies) {
        this(namespaces, pods, policies, new TreeMap<>(), new TreeMap<>());
    }

    /** The namespace's labels as the cluster has them, or the labels the API server would give it. */
    public Namespace namespace(String name) {
        Namespace ns = namespaces.get(name);
        return ns != null ? ns : Namespace.unknown(name);
    }

    public Optional<Pod> pod(PodKey key) {
        return Optional.ofNullable(pods.get(key));
    }

    public ClusterState apply(ClusterEvent event) {
        TreeMap<String, Namespace> ns = new TreeMap<>(namespaces);
        TreeMap<PodKey, Pod> p = new TreeMap<>(pods);
        TreeMap<PolicyKey, NetworkPolicy> pol = new TreeMap<>(policies);
        TreeMap<String, ClusterNetworkPolicy> cnp = new TreeMap<>(clusterPolicies);
        TreeMap<String, Node> n = new TreeMap<>(nodes);
        if (event instanceof ClusterEvent.NamespaceUpserted e) {
            ns.put(e.namespace().name(), e.namespace());
        } else if (event instanceof ClusterEvent.NamespaceDeleted e) {
            ns.remove(e.name());
        } else if (event instanceof ClusterEvent.PodUpserted e) {
            p.put(e.pod().key(), e.pod());
        } else if (event instanceof ClusterEvent.PodDeleted e) {
            p.remove(e.key());
        } else if (event instanceof ClusterEvent.PolicyUpserted e) {
            pol.put(e.policy().key(), e.policy());
        } else if (event instanceof ClusterEvent.PolicyDeleted e) {
            pol.remove(e.key());
        } else if (event instanceof ClusterEvent.ClusterPolicyUpserted e) {
            cnp.put(e.policy().name(), e.policy());
        } else if (event instanceof ClusterEvent.ClusterPolicyDeleted e) {
            cnp.remove(e.name());
        } else if (event instanceof ClusterEvent.NodeUpserted e) {
            n.put(e.node().name(), e.node());
        } else if (event instanceof ClusterEvent.NodeDeleted e) {
            n.remove(e.name());
        }
        return new ClusterState(ns, p, pol, cnp, n);
    }

    public ClusterState applyAll(Iterable<? extends ClusterEvent> events) {
        ClusterState s = this;
        for (ClusterEvent e : events) {
            s = s.apply(e);
        }
        return s;
    }

    /**
     * The events that turn this state into {@code next}: upserts of namespaces, nodes, pods, policies and
     * ClusterNetworkPolicies that are new or changed, then deletes of those that are gone, in the reverse
     * order. What a source that sees whole snapshots (a manifest directory) feeds the compiler, like an
     * informer would.
     */
    public List<ClusterEvent> diff(ClusterState next) {
        List<ClusterEvent> events = new ArrayList<>();
        next.namespaces.forEach((k, v) -> {
            if (!v.equals(namespaces.get(k))) {
                events.add(new ClusterEvent.NamespaceUpserted(v));
            }
        });
        next.nodes.forEach((k, v) -> {
            if (!v.equals(nodes.get(k))) {
                events.add(new ClusterEvent.NodeUpserted(v));
            }
        });
        next.pods.forEach((k, v) -> {
            if (!v.equals(pods.get(k))) {
                events.add(new ClusterEvent.PodUpserted(v));
            }
        });
        next.policies.forEach((k, v) -> {
            if (!v.equals(policies.get(k))) {
                events.add(new ClusterEvent.PolicyUpserted(v));
            }
        });
        next.clusterPolicies.forEach((k, v) -> {
            if (!v.equals(clusterPolicies.get(k))) {
                events.add(new ClusterEvent.ClusterPolicyUpserted(v));
            }
        });
        clusterPolicies.keySet().stream().filter(k -> !next.clusterPolicies.containsKey(k))
                .forEach(k -> events.add(new ClusterEvent.ClusterPolicyDeleted(k)));
        policies.keySet().stream().filter(k -> !next.policies.containsKey(k)).forEach(k -> events.add(new ClusterEvent.PolicyDeleted(k)));
        pods.keySet().stream().filter(k -> !next.pods.containsKey(k)).forEach(k -> events.add(new ClusterEvent.PodDeleted(k)));
        nodes.keySet().stream().filter(k -> !next.nodes.containsKey(k)).forEach(k -> events.add(new ClusterEvent.NodeDeleted(k)));
        namespaces.keySet().stream().filter(k -> !next.namespaces.containsKey(k))
                .forEach(k -> events.add(new ClusterEvent.NamespaceDeleted(k)));
        return events;
    }

    /** The events that build this state from nothing: namespaces, nodes, pods, policies, then ClusterNetworkPolicies. */
    public List<ClusterEvent> asEvents() {
        List<ClusterEvent> events = new ArrayList<>();
        namespaces.values().forEach(n -> events.add(new ClusterEvent.NamespaceUpserted(n)));
        nodes.values().forEach(n -> events.add(new ClusterEvent.NodeUpserted(n)));
        pods.values().forEach(p -> events.add(new ClusterEvent.PodUpserted(p)));
        policies.values().forEach(p -> events.add(new ClusterEvent.PolicyUpserted(p)));
        clusterPolicies.values().forEach(p -> events.add(new ClusterEvent.ClusterPolicyUpserted(p)));
        return events;
    }
}
