package io.npmagent.harness.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PodPhase;
import java.util.List;
import org.junit.jupiter.api.Test;

class AddressAssignerTest {
    private static ClusterState with(Pod... pods) {
        ClusterState s = ClusterState.EMPTY;
        for (Pod p : pods) {
            s = s.apply(new ClusterEvent.PodUpserted(p));
        }
        return s;
    }

    @Test
    void podsWithoutAddressesGetBothFamiliesAndKeepThem() {
        AddressAssigner a = new AddressAssigner();
        ClusterState first = a.assign(with(Pod.builder("x", "a").build(), Pod.builder("x", "b").ip("10.0.0.9").build()));
        assertThat(first.pod(PodKey.parse("x/a")).orElseThrow().ips())
                .containsExactly(IpAddress.parse("10.250.0.1"), IpAddress.parse("fd50::1"));
        assertThat(first.pod(PodKey.parse("x/b")).orElseThrow().ips()).as("declared addresses stay").containsExactly(IpAddress.parse("10.0.0.9"));

        ClusterState second = a.assign(with(Pod.builder("x", "c").build(), Pod.builder("x", "a").build()));
        assertThat(second.pod(PodKey.parse("x/a")).orElseThrow().ips()).as("sticky").contains(IpAddress.parse("10.250.0.1"));
        assertThat(second.pod(PodKey.parse("x/c")).orElseThrow().ips()).contains(IpAddress.parse("10.250.0.2"));
    }

    @Test
    void addressesThatManifestsNameAreNeverHandedOut() {
        AddressAssigner a = new AddressAssigner();
        ClusterState s = a.assign(with(Pod.builder("x", "taken").ip("10.250.0.1").build(), Pod.builder("x", "new").build()));
        assertThat(s.pod(PodKey.parse("x/new")).orElseThrow().ips()).doesNotContain(IpAddress.parse("10.250.0.1"));
    }

    @Test
    void hostNetworkAndFinishedPodsGetNothing() {
        AddressAssigner a = new AddressAssigner();
        ClusterState s = a.assign(with(Pod.builder("x", "h").hostNetwork(true).build(),
                Pod.builder("x", "done").phase(PodPhase.SUCCEEDED).build()));
        assertThat(s.pods().values()).allSatisfy(p -> assertThat(p.ips()).isEmpty());
        assertThat(List.copyOf(s.pods().keySet())).hasSize(2);
    }
}
