package io.npmagent.dataplane.model;

/**
 * One change to the cluster as a source (informers or a manifest directory) saw it. Upserts carry the
 * whole new object; deletes carry only the key, so a delete whose final state is unknown still deletes.
 * Cluster-scoped objects (namespaces, nodes, ClusterNetworkPolicies) are keyed by name.
 */
public sealed interface ClusterEvent {

    record NamespaceUpserted(Namespace namespace) implements ClusterEvent {}

    record NamespaceDeleted(String name) implements ClusterEvent {}

    record PodUpserted(Pod pod) implements ClusterEvent {}

    record PodDeleted(PodKey key) implements ClusterEvent {}

    record PolicyUpserted(NetworkPolicy policy) implements ClusterEvent {}

    record PolicyDeleted(PolicyKey key) implements ClusterEvent {}

    record ClusterPolicyUpserted(ClusterNetworkPolicy policy) implements ClusterEvent {}

    record ClusterPolicyDeleted(String name) implements ClusterEvent {}

    record NodeUpserted(Node node) implements ClusterEvent {}

    record NodeDeleted(String name) implements ClusterEvent {}
}
