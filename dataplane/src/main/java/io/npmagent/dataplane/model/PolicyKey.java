package io.npmagent.dataplane.model;

import java.util.Comparator;
import java.util.Objects;

/** A NetworkPolicy's identity: namespace and name. Printed as {@code namespace/name}. */
public record PolicyKey(String namespace, String name) implements Comparable<PolicyKey> {
    private static final Comparator<PolicyKey> ORDER =
            Comparator.comparing(PolicyKey::namespace).thenComparing(PolicyKey::name);

    public PolicyKey {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(name, "name");
    }

    @Override
    public int compareTo(PolicyKey o) {
        return ORDER.compare(this, o);
    }

    @Override
    public String toString() {
        return namespace + "/" + name;
    }
}
