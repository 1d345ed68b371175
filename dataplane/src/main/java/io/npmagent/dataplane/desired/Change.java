package io.npmagent.dataplane.desired;

import java.util.Objects;
import java.util.Optional;

/**
 * One row's change: its value before and after (null: absent). Carrying the old value lets the batch
 * queue coalesce exactly (a row changed and changed back is no change at all, an add followed by a
 * delete of a never-applied row cancels out) and lets a backend undo a batch that did not land.
 */
public record Change<V>(V before, V after) {

    public Change {
        if (before == null && after == null) {
            throw new IllegalArgumentException("a change needs a value on one side");
        }
    }

    public static <V> Change<V> of(Optional<V> before, Optional<V> after) {
        return new Change<>(before.orElse(null), after.orElse(null));
    }

    public boolean isRemoval() {
        return after == null;
    }

    /** This change followed by {@code later}: from this one's before to the later one's after, or null if that is no change. */
    public Change<V> then(Change<V> later) {
        return Objects.equals(before, later.after) ? null : new Change<>(before, later.after);
    }

    /** The change that undoes this one. */
    public Change<V> inverse() {
        return new Change<>(after, before);
    }
}
