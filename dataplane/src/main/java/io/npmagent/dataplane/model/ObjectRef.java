package io.npmagent.dataplane.model;

/**
 * Names a Kubernetes object in errors and logs: {@code NetworkPolicy x/deny-all}, {@code Namespace x},
 * {@code ClusterNetworkPolicy deny-metadata}. Cluster-scoped objects have a null namespace.
 */
public record ObjectRef(String kind, String namespace, String name) {

    public static ObjectRef of(PolicyKey key) {
        return new ObjectRef("NetworkPolicy", key.namespace(), key.name());
    }

    public static ObjectRef of(PodKey key) {
        return new ObjectRef("Pod", key.namespace(), key.name());
    }

    public static ObjectRef namespace(String name) {
        return new ObjectRef("Namespace", null, name);
    }

    public static ObjectRef clusterNetworkPolicy(String name) {
        return new ObjectRef("ClusterNetworkPolicy", null, name);
    }

    public static ObjectRef node(String name) {
        return new ObjectRef("Node", null, name);
    }

    @Override
    public String toString() {
        return kind + " " + (namespace == null ? name : namespace + "/" + name);
    }
}
