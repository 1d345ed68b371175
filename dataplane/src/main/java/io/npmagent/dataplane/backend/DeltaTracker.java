package io.npmagent.dataplane.backend;

import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * What the kernel holds of one kind of keyed object, and which keys may differ from what is wanted:
 * the bookkeeping every backend's writer does (as Felix's {@code deltatracker}). The netfilter tables
 * and the eBPF maps all keep one per kind of object.
 *
 * <p>The cycle: a writer notes the keys that may have changed ({@link #mayDiffer}), or names the keys
 * to compare itself; asks for the {@link Delta} between them and what it wants; writes it; and records
 * what landed ({@link #updated}, {@link #deleted}). A read-back ({@link #replace}) makes every key one
 * to compare, since anything may differ then. Values are compared with {@code equals}; a wanted value
 * of {@code null} means the key should be absent. For a set, the elements are the keys and the value
 * is {@link #PRESENT}.
 *
 * <p>Not thread-safe: one writer owns it.
 */
public final class DeltaTracker<K, V> {
    /** The value of an element of a set. */
    public static final Boolean PRESENT = Boolean.TRUE;

    private final Map<K, V> kernel = new HashMap<>();
    private final Set<K> pending = new HashSet<>();
    /** Every key may differ: the kernel's and the wanted ones. */
    private boolean everything = true;

    /**
     * Writes that bring some keys to what is wanted: values to set, and keys to delete, each in the
     * order the keys were given.
     */
    public record Delta<K, V>(Map<K, V> updates, Set<K> deletions) {
        public boolean isEmpty() {
            return updates.isEmpty() && deletions.isEmpty();
        }

        public int size() {
            return updates.size() + deletions.size();
        }
    }

    /** A tracker of a set believed to hold {@code elements}. */
    public static <E> DeltaTracker<E, Boolean> ofElements(Collection<E> elements) {
        DeltaTracker<E, Boolean> t = new DeltaTracker<>();
        elements.forEach(e -> t.kernel.put(e, PRESENT));
        t.everything = false;
        return t;
    }

    // ---- which keys may differ ------------------------------------------------------------------------

    /** {@code key} may no longer hold what is wanted: the next {@link #pendingDelta} compares it. */
    public void mayDiffer(K key) {
        if (!everything) {
            pending.add(key);
        }
    }

    public void mayDiffer(Collection<? extends K> keys) {
        if (!everything) {
            pending.addAll(keys);
        }
    }

    /** Any key may differ (a read-back, a full render): the next {@link #pendingDelta} compares them all. */
    public void everythingMayDiffer() {
        pending.clear();
        everything = true;
    }

    /** The kernel holds what is wanted: nothing is pending. */
    public void caughtUp() {
        pending.clear();
        everything = false;
    }

    // ---- comparing ------------------------------------------------------------------------------------

    /**
     * The writes that bring the pending keys to {@code wanted}; when every key may differ, those are the
     * kernel's and {@code wantedKeys}.
     */
    public Delta<K, V> pendingDelta(Set<K> wantedKeys, Function<? super K, ? extends V> wanted) {
        return delta(pendingKeys(wantedKeys), wanted);
    }

    /** Whether any pending key holds other than {@code wanted}. */
    public boolean pendingDiffers(Set<K> wantedKeys, Function<? super K, ? extends V> wanted) {
        for (K k : pendingKeys(wantedKeys)) {
            if (!Objects.equals(wanted.apply(k), kernel.get(k))) {
                return true;
            }
        }
        return false;
    }

    private Collection<K> pendingKeys(Set<K> wantedKeys) {
        if (!everything) {
            return pending;
        }
        Set<K> all = new HashSet<>(kernel.keySet());
        all.addAll(wantedKeys);
        return all;
    }

    /** The writes that bring {@code keys} (and no others) to {@code wanted}, in the order of {@code keys}. */
    public Delta<K, V> delta(Iterable<? extends K> keys, Function<? super K, ? extends V> wanted) {
        Map<K, V> updates = new LinkedHashMap<>();
        Set<K> deletions = new LinkedHashSet<>();
        for (K k : keys) {
            V want = wanted.apply(k);
            V have = kernel.get(k);
            if (want != null && !want.equals(have)) {
                updates.put(k, want);
            } else if (want == null && have != null) {
                deletions.add(k);
            }
        }
        return new Delta<>(updates, deletions);
    }

    // ---- what landed ----------------------------------------------------------------------------------

    /** The updates of {@code delta} are in the kernel. */
    public void updated(Delta<K, V> delta) {
        kernel.putAll(delta.updates());
    }

    /** The deletions of {@code delta} are done. */
    public void deleted(Delta<K, V> delta) {
        delta.deletions().forEach(kernel::remove);
    }

    /** All of {@code delta} landed. */
    public void landed(Delta<K, V> delta) {
        updated(delta);
        deleted(delta);
    }

    /** What a read-back found; every key may differ from what is wanted now. */
    public void replace(Map<K, V> read) {
        kernel.clear();
        kernel.putAll(read);
        everythingMayDiffer();
    }

    /** The kernel holds none of these objects (read back so, or deleted wholesale). */
    public void clear() {
        replace(Map.of());
    }

    // ---- what the kernel holds ------------------------------------------------------------------------

    public V get(K key) {
        return kernel.get(key);
    }

    public int size() {
        return kernel.size();
    }

    /** What the kernel holds, read-only. */
    public Map<K, V> view() {
        return Collections.unmodifiableMap(kernel);
    }
}
