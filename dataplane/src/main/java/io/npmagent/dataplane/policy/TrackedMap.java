package io.npmagent.dataplane.policy;

import io.npmagent.dataplane.desired.Change;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A map of desired rows that remembers, for every key touched since the last {@link #drain}, the row
 * it had then, so the drain yields exactly the net changes (a row set and set back yields nothing).
 */
final class TrackedMap<K, V> {
    private final Map<K, V> rows = new HashMap<>();
    private final Map<K, Optional<V>> before = new HashMap<>();

    V get(K key) {
        return rows.get(key);
    }

    Map<K, V> view() {
        return Collections.unmodifiableMap(rows);
    }

    void put(K key, V value) {
        Objects.requireNonNull(value, "value");
        remember(key);
        rows.put(key, value);
    }

    void remove(K key) {
        if (rows.containsKey(key)) {
            remember(key);
            rows.remove(key);
        }
    }

    private void remember(K key) {
        if (!before.containsKey(key)) {
            before.put(key, Optional.ofNullable(rows.get(key)));
        }
    }

    /** The rows that differ from the last drain, with their values then and now. */
    Map<K, Change<V>> drain() {
        Map<K, Change<V>> changes = new HashMap<>();
        before.forEach((key, was) -> {
            Optional<V> now = Optional.ofNullable(rows.get(key));
            if (!now.equals(was)) {
                changes.put(key, Change.of(was, now));
            }
        });
        before.clear();
        return changes;
    }
}
