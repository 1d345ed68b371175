package io.npmagent.dataplane.util;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/** Indexes kept as maps of sets: adding to and removing from them, with no empty set left behind. */
public final class Multimaps {
    private Multimaps() {}

    public static <K, V> void add(Map<K, Set<V>> index, K key, V value) {
        index.computeIfAbsent(key, k -> new HashSet<>()).add(value);
    }

    public static <K, V> void remove(Map<K, Set<V>> index, K key, V value) {
        Set<V> values = index.get(key);
        if (values != null) {
            values.remove(value);
            if (values.isEmpty()) {
                index.remove(key);
            }
        }
    }
}
