package io.npmagent.dataplane.model;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * An immutable snapshot of everything the agent knows about the cluster: what the reference evaluator
 * judges and what a from-scratch compile starts from. Updated by {@link #apply}, which returns a new
 * snapshot.
 */
public record ClusterState(
        SortedMap<String, Namespace> namespaces,
        SortedMap<PodKey, Pod> pods,
        SortedMap<PolicyKey, NetworkPolicy> policies) {

    public static final ClusterState EMPTY = new ClusterState(new TreeMap<>(), new TreeMap<>(), new TreeMap<>());

    public ClusterState {
        namespaces = Collections.unmodifiableSortedMap(new TreeMap<>(namespaces));
        pods = Collections.unmodifiableSortedMap(new TreeMap<>(pods));
        policies = Collections.unmodifiableSortedMap(new TreeMap<>(policies));
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
        }
        return new ClusterState(ns, p, pol);
    }

    public ClusterState applyAll(Iterable<? extends ClusterEvent> events) {
        ClusterState s = this;
        for (ClusterEvent e : events) {
            s = s.apply(e);
        }
        return s;
    }

    /**
     * The events that turn this state into {@code next}: upserts of namespaces, pods and policies that
     * are new or changed, then deletes of policies, pods and namespaces that are gone. What a source
     * that sees whole snapshots (a manifest directory) feeds the compiler, like an informer would.
     */
    public List<ClusterEvent> diff(ClusterState next) {
        List<ClusterEvent> events = new ArrayList<>();
        next.namespaces.forEach((k, v) -> {
            if (!v.equals(namespaces.get(k))) {
                events.add(new ClusterEvent.NamespaceUpserted(v));
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
        policies.keySet().stream().filter(k -> !next.policies.containsKey(k)).forEach(k -> events.add(new ClusterEvent.PolicyDeleted(k)));
        pods.keySet().stream().filter(k -> !next.pods.containsKey(k)).forEach(k -> events.add(new ClusterEvent.PodDeleted(k)));
        namespaces.keySet().stream().filter(k -> !next.namespaces.containsKey(k))
                .forEach(k -> events.add(new ClusterEvent.NamespaceDeleted(k)));
        return events;
    }

    /** The events that build this state from nothing: namespaces, then pods, then policies. */
    public List<ClusterEvent> asEvents() {
        List<ClusterEvent> events = new ArrayList<>();
        namespaces.values().forEach(n -> events.add(new ClusterEvent.NamespaceUpserted(n)));
        pods.values().forEach(p -> events.add(new ClusterEvent.PodUpserted(p)));
        policies.values().forEach(p -> events.add(new ClusterEvent.PolicyUpserted(p)));
        return events;
    }
}
