package io.npmagent.dataplane.model;

import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A namespace and its labels.
 *
 * <p>The labels always hold {@code kubernetes.io/metadata.name=<name>}: the API server sets that
 * label on every namespace and overwrites any other value, so a namespace read from a manifest that
 * lacks it is given it here, and selectors on it behave as in a cluster.
 */
public record Namespace(String name, Map<String, String> labels) {
    public static final String NAME_LABEL = "kubernetes.io/metadata.name";

    public Namespace {
        Objects.requireNonNull(name, "name");
        TreeMap<String, String> copy = new TreeMap<>(labels == null ? Map.of() : labels);
        copy.put(NAME_LABEL, name);
        labels = Map.copyOf(copy);
    }

    /** The labels the cluster would show for a namespace it has not told us about yet. */
    public static Namespace unknown(String name) {
        return new Namespace(name, Map.of());
    }
}
