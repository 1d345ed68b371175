package io.npmagent.dataplane.tier;

import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.Selector;
import java.util.Objects;

/**
 * The pods a ClusterNetworkPolicy applies to, validated: those of the namespaces
 * {@code namespaceSelector} matches whose labels {@code podSelector} matches. A {@code namespaces}
 * subject is one whose pod selector is {@link Selector#ALL}.
 */
public record ClusterSubject(Selector namespaceSelector, Selector podSelector) {
    /** What a subject that cannot be read stands for: it might have meant any pod (see the normalizer). */
    public static final ClusterSubject EVERY_POD = new ClusterSubject(Selector.ALL, Selector.ALL);

    public ClusterSubject {
        Objects.requireNonNull(namespaceSelector, "namespaceSelector");
        Objects.requireNonNull(podSelector, "podSelector");
    }

    /**
     * True when the policy applies to {@code pod}, which lives in {@code namespace}. Only live pods on
     * the pod network are subjects: the API leaves host-network pods out ("host-networked pods are not
     * included in subject selection"), and a terminal pod has given its addresses back.
     */
    public boolean selects(Pod pod, Namespace namespace) {
        return pod.policyEndpoint()
                && namespaceSelector.matches(namespace.labels())
                && podSelector.matches(pod.labels());
    }

    @Override
    public String toString() {
        return "namespaces " + namespaceSelector + " pods " + podSelector;
    }
}
