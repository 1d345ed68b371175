package io.npmagent.dataplane.model;

import java.util.Comparator;
import java.util.Objects;

/** A pod's identity in the cluster: namespace and name. Printed as {@code namespace/name}. */
public record PodKey(String namespace, String name) implements Comparable<PodKey> {
    private static final Comparator<PodKey> ORDER =
            Comparator.comparing(PodKey::namespace).thenComparing(PodKey::name);

    public PodKey {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(name, "name");
    }

    /** Parses {@code namespace/name}. */
    public static PodKey parse(String text) {
        int slash = text.indexOf('/');
        if (slash <= 0 || slash == text.length() - 1 || text.indexOf('/', slash + 1) >= 0) {
            throw new IllegalArgumentException("\"" + text + "\" is not NAMESPACE/POD");
        }
        return new PodKey(text.substring(0, slash), text.substring(slash + 1));
    }

    @Override
    public int compareTo(PodKey o) {
        return ORDER.compare(this, o);
    }

    @Override
    public String toString() {
        return namespace + "/" + name;
    }
}
