package io.npmagent.dataplane.policy;

import io.npmagent.dataplane.model.Selector;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Items (pods, identities) filed by namespace and by each of their labels, so that a selector is asked
 * only about items that could match it: those that carry the rarest of the labels it requires
 * ({@code matchLabels}, or {@code In} with its values). Without such a label, every item of the
 * namespace (or of all namespaces) is a candidate. Matching itself is still the selector's business.
 *
 * <p>Without it, a policy over a namespace of 1,280 pods asked every pod, which made compiling 640
 * policies cost 640 x 1,280 selector evaluations.
 */
final class LabelIndex<T> {
    /** One label of items in one namespace, or in any namespace when {@code namespace} is null. */
    private record Posting(String namespace, String key, String value) {}

    private final Map<String, Set<T>> byNamespace = new HashMap<>();
    private final Set<T> all = new HashSet<>();
    private final Map<Posting, Set<T>> byLabel = new HashMap<>();

    void add(String namespace, Map<String, String> labels, T item) {
        byNamespace.computeIfAbsent(namespace, k -> new HashSet<>()).add(item);
        all.add(item);
        labels.forEach((k, v) -> {
            byLabel.computeIfAbsent(new Posting(namespace, k, v), p -> new HashSet<>()).add(item);
            byLabel.computeIfAbsent(new Posting(null, k, v), p -> new HashSet<>()).add(item);
        });
    }

    /** Removes {@code item}, filed with {@code labels} (the ones it was added with). */
    void remove(String namespace, Map<String, String> labels, T item) {
        removeFrom(byNamespace, namespace, item);
        all.remove(item);
        labels.forEach((k, v) -> {
            removeFrom(byLabel, new Posting(namespace, k, v), item);
            removeFrom(byLabel, new Posting(null, k, v), item);
        });
    }

    /** Every item that could match {@code selector} in {@code namespace} (null: in any namespace). */
    Set<T> candidates(String namespace, Selector selector) {
        Set<T> best = namespace == null ? all : byNamespace.getOrDefault(namespace, Set.of());
        for (Map.Entry<String, String> pair : selector.matchLabels().entrySet()) {
            Set<T> p = byLabel.getOrDefault(new Posting(namespace, pair.getKey(), pair.getValue()), Set.of());
            if (p.size() < best.size()) {
                best = p;
            }
        }
        for (Selector.Requirement r : selector.requirements()) {
            if (r.operator() != Selector.Operator.IN) {
                continue;
            }
            Set<T> union = new HashSet<>();
            for (String value : r.values()) {
                union.addAll(byLabel.getOrDefault(new Posting(namespace, r.key(), value), Set.of()));
            }
            if (union.size() < best.size()) {
                best = union;
            }
        }
        return Collections.unmodifiableSet(best);
    }

    private static <K, T> void removeFrom(Map<K, Set<T>> map, K key, T item) {
        Set<T> set = map.get(key);
        if (set != null && set.remove(item) && set.isEmpty()) {
            map.remove(key);
        }
    }
}
