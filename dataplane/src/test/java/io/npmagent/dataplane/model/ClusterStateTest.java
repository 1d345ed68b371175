package io.npmagent.dataplane.model;

import static io.npmagent.dataplane.model.ClusterPolicyFixtures.admin;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.baseline;
import static io.npmagent.dataplane.model.PolicyFixtures.labels;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static io.npmagent.dataplane.model.PolicyFixtures.policy;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** ClusterState holding ClusterNetworkPolicies and nodes beside namespaces, pods and NetworkPolicies. */
class ClusterStateTest {
    private static final ClusterNetworkPolicy CNP = admin("deny", 1).subjectNamespaces(match()).build();
    private static final Node NODE = new Node("node-1", labels("role", "worker"), List.of(IpAddress.parse("192.168.0.10")));

    @Test
    void clusterPoliciesAndNodesAreUpsertedAndDeletedByName() {
        ClusterState s = ClusterState.EMPTY.applyAll(List.of(
                new ClusterEvent.ClusterPolicyUpserted(CNP), new ClusterEvent.NodeUpserted(NODE)));
        assertThat(s.clusterPolicies()).containsOnlyKeys("deny").containsValue(CNP);
        assertThat(s.nodes()).containsOnlyKeys("node-1").containsValue(NODE);

        ClusterNetworkPolicy edited = baseline("deny", 2).subjectNamespaces(match()).build();
        assertThat(s.apply(new ClusterEvent.ClusterPolicyUpserted(edited)).clusterPolicies()).containsExactlyEntriesOf(
                new TreeMap<>(java.util.Map.of("deny", edited)));
        ClusterState gone = s.applyAll(List.of(new ClusterEvent.ClusterPolicyDeleted("deny"), new ClusterEvent.NodeDeleted("node-1")));
        assertThat(gone.clusterPolicies()).isEmpty();
        assertThat(gone.nodes()).isEmpty();
        assertThat(gone).isEqualTo(ClusterState.EMPTY);
    }

    @Test
    void theThreeMapConstructorMakesAClusterWithoutClusterPoliciesOrNodes() {
        TreeMap<String, Namespace> ns = new TreeMap<>(java.util.Map.of("x", new Namespace("x", null)));
        ClusterState s = new ClusterState(ns, new TreeMap<>(), new TreeMap<>());
        assertThat(s.clusterPolicies()).isEmpty();
        assertThat(s.nodes()).isEmpty();
        assertThat(s).isEqualTo(ClusterState.EMPTY.apply(new ClusterEvent.NamespaceUpserted(new Namespace("x", null))));
    }

    @Test
    void diffAndAsEventsCarryClusterPoliciesAndNodes() {
        ClusterState before = ClusterState.EMPTY.applyAll(List.of(
                new ClusterEvent.NamespaceUpserted(new Namespace("x", null)),
                new ClusterEvent.NodeUpserted(NODE),
                new ClusterEvent.ClusterPolicyUpserted(CNP)));
        Node relabelled = new Node("node-1", labels("role", "control-plane"), NODE.addresses());
        ClusterNetworkPolicy other = baseline("other", 3).subjectNamespaces(match()).build();
        ClusterState after = ClusterState.EMPTY.applyAll(List.of(
                new ClusterEvent.NamespaceUpserted(new Namespace("x", null)),
                new ClusterEvent.NodeUpserted(relabelled),
                new ClusterEvent.PolicyUpserted(policy("x", "np").build()),
                new ClusterEvent.ClusterPolicyUpserted(other)));

        assertThat(before.diff(after)).containsExactly(
                new ClusterEvent.NodeUpserted(relabelled),
                new ClusterEvent.PolicyUpserted(policy("x", "np").build()),
                new ClusterEvent.ClusterPolicyUpserted(other),
                new ClusterEvent.ClusterPolicyDeleted("deny"));
        assertThat(before.applyAll(before.diff(after))).isEqualTo(after);
        assertThat(after.diff(ClusterState.EMPTY)).containsExactly(
                new ClusterEvent.ClusterPolicyDeleted("other"),
                new ClusterEvent.PolicyDeleted(new PolicyKey("x", "np")),
                new ClusterEvent.NodeDeleted("node-1"),
                new ClusterEvent.NamespaceDeleted("x"));
        assertThat(ClusterState.EMPTY.applyAll(after.asEvents())).isEqualTo(after);
        assertThat(after.asEvents()).hasSize(4);
    }

    @Test
    void aClusterNetworkPolicyKeepsAbsentAndEmptyListsApart() {
        ClusterNetworkPolicy.Rule absent = new ClusterNetworkPolicy.Rule(null, "Deny", null, null);
        ClusterNetworkPolicy.Rule empty = new ClusterNetworkPolicy.Rule(null, "Deny", List.of(), List.of());
        assertThat(absent.peers()).isNull();
        assertThat(absent.protocols()).isNull();
        assertThat(empty.peers()).isEmpty();
        assertThat(empty.protocols()).isEmpty();
        assertThat(absent).isNotEqualTo(empty);
    }
}
