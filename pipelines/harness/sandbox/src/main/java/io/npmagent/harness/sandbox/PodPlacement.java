package io.npmagent.harness.sandbox;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The sandbox's scheduler: which of its nodes a pod of the manifest directory goes on. A pod whose
 * {@code spec.nodeName} is one of the sandbox's nodes goes there. A pod without one takes the next node
 * in turn, in the order the directory is applied (files by name, documents in order), and keeps it while
 * it stays in the directory. A pod naming a node the sandbox does not have (a manifest written for another
 * cluster, like the examples' {@code node-a}) goes where that name's first pod went: the first pod naming
 * it takes the next node in turn, and every pod naming it follows, so pods written to share a node share
 * one here.
 */
final class PodPlacement {
    private final List<String> nodes;
    /** Where each pod went, by {@code namespace/name}. */
    private final Map<String, String> placed = new HashMap<>();
    /** The node that stands in for each node name the sandbox does not have. */
    private final Map<String, String> standIns = new HashMap<>();
    private int next;

    PodPlacement(List<String> nodes) {
        if (nodes.isEmpty()) {
            throw new IllegalArgumentException("a sandbox has at least one node");
        }
        this.nodes = List.copyOf(nodes);
    }

    boolean placed(String pod) {
        return placed.containsKey(pod);
    }

    /** The node for {@code pod}, whose manifest names {@code named} (null or empty: none). */
    String place(String pod, String named) {
        if (named != null && nodes.contains(named)) {
            placed.put(pod, named);
            return named;
        }
        String node = placed.get(pod);
        if (node == null) {
            node = named == null || named.isEmpty() ? nextNode() : standIns.computeIfAbsent(named, n -> nextNode());
            placed.put(pod, node);
        }
        return node;
    }

    /**
     * Takes note that the API server already has {@code pod}, whose manifest names {@code named}, on
     * {@code node}: a restarted daemon keeps its pods where they are.
     */
    void adopt(String pod, String named, String node) {
        if (nodes.contains(node)) {
            placed.put(pod, node);
            if (named != null && !named.isEmpty() && !nodes.contains(named)) {
                standIns.putIfAbsent(named, node);
            }
        }
    }

    /** Forgets the pods that left the directory. */
    void retain(Set<String> pods) {
        placed.keySet().retainAll(pods);
    }

    private String nextNode() {
        String node = nodes.get(next % nodes.size());
        next++;
        return node;
    }
}
