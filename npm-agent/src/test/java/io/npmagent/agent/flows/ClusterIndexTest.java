package io.npmagent.agent.flows;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PodPhase;
import io.npmagent.dataplane.model.PolicyKey;
import org.junit.jupiter.api.Test;

/** Which pod owns an address, as the compiler and the evaluator decide it, kept in step event by event. */
class ClusterIndexTest {
    private static final IpAddress IP = IpAddress.parse("10.1.0.7");
    private final ClusterIndex index = new ClusterIndex();

    private void upsert(Pod pod) {
        index.take(new ClusterEvent.PodUpserted(pod));
    }

    @Test
    void podsAreFoundByTheirAddressesAndHostNetworkPodsNever() {
        FlowFixtures.cluster().forEach(index::take);
        assertThat(index.podKeyAt(FlowFixtures.CLIENT)).isEqualTo(new PodKey("x", "a"));
        assertThat(index.podAt(FlowFixtures.SERVER).labels()).containsEntry("app", "web");
        assertThat(index.podKeyAt(FlowFixtures.NODE)).as("a host-network pod's address is the node's").isNull();
        assertThat(index.podKeyAt(IpAddress.parse("10.9.9.9"))).isNull();
        assertThat(index.policy(FlowFixtures.ALLOW_WEB)).isNotNull();
        assertThat(index.namespace("x").labels()).containsEntry("kubernetes.io/metadata.name", "x");
        assertThat(index.namespace("absent").labels()).as("as the API server would label it").containsEntry("kubernetes.io/metadata.name", "absent");
        assertThat(index.addresses()).isEqualTo(2);
    }

    @Test
    void aSharedAddressBelongsToTheLeastPodAndPassesOnWhenItGoes() {
        upsert(Pod.builder("y", "late").ip(IP).build());
        upsert(Pod.builder("x", "early").ip(IP).build());
        assertThat(index.podKeyAt(IP)).isEqualTo(new PodKey("x", "early"));
        index.take(new ClusterEvent.PodDeleted(new PodKey("x", "early")));
        assertThat(index.podKeyAt(IP)).isEqualTo(new PodKey("y", "late"));
        upsert(Pod.builder("y", "late").ip(IP).phase(PodPhase.SUCCEEDED).build());
        assertThat(index.podKeyAt(IP)).as("a terminal pod has released it").isNull();
        assertThat(index.addresses()).isZero();
    }

    @Test
    void aNewAddressReplacesTheOldOneAndARedeliveryChangesNothing() {
        upsert(Pod.builder("x", "a").ip(IP).build());
        upsert(Pod.builder("x", "a").ip(IP).build());
        assertThat(index.podKeyAt(IP)).isEqualTo(new PodKey("x", "a"));
        upsert(Pod.builder("x", "a").ip("10.1.0.8").build());
        assertThat(index.podKeyAt(IP)).isNull();
        assertThat(index.podKeyAt(IpAddress.parse("10.1.0.8"))).isEqualTo(new PodKey("x", "a"));
        upsert(Pod.builder("x", "a").ip("10.1.0.8").hostNetwork(true).build());
        assertThat(index.podKeyAt(IpAddress.parse("10.1.0.8"))).as("moved to the host's network").isNull();
    }

    @Test
    void policiesAndNamespacesFollowTheirDeletes() {
        FlowFixtures.cluster().forEach(index::take);
        index.take(new ClusterEvent.PolicyDeleted(new PolicyKey("y", "allow-web")));
        index.take(new ClusterEvent.NamespaceDeleted("x"));
        assertThat(index.policy(FlowFixtures.ALLOW_WEB)).isNull();
        assertThat(index.namespace("x").labels()).doesNotContainKey("team");
    }
}
