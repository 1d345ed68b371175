package io.npmagent.dataplane.desired;

import static io.npmagent.dataplane.model.PolicyFixtures.labels;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Selector;
import io.npmagent.dataplane.policy.PolicyCompiler;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class DesiredStateTest {
    private static final IdentityId ID = new IdentityId(IdentityId.FIRST);
    private static final Identity IDENTITY = new Identity("x", Map.of(), Map.of("app", "a"), Map.of());
    private static final PeerSetKey SET = PeerSetKey.SelectorPeers.inNamespace("x", Selector.ALL);
    private static final PolicyKey POLICY = new PolicyKey("x", "p");

    @Test
    void dumpKeepsOneRowPerLineWhateverTheLabelsHold() {
        Pod hostile = Pod.builder("x", "a").labels(labels("app", "web\npods:\n  x/forged [10.9.9.9]")).ip("10.0.0.1").build();
        DesiredState state = PolicyCompiler.compile(ClusterState.EMPTY.apply(new ClusterEvent.PodUpserted(hostile)), null);

        String dump = state.dump();

        assertThat(dump.lines().filter(l -> l.contains("forged"))).singleElement().asString()
                .contains("web\\npods:\\n  x/forged");
        assertThat(dump.lines().filter(l -> l.startsWith("pods:"))).hasSize(1);
    }

    @Test
    void applyFollowsADeltaAndRefusesAMemberOfAMissingSet() {
        DesiredDelta delta = new DesiredDelta(
                Map.of(ID, new Change<>(null, IDENTITY)),
                Map.of(IpAddress.parse("10.0.0.1"), new Change<>(null, ID)),
                Map.of(SET, true),
                Map.of(new Membership(SET, ID), true),
                Map.of(POLICY, new Change<>(null, new CompiledPolicy(POLICY, Set.of(Direction.INGRESS),
                        List.of(new CompiledRule(0, false, List.of(SET), true, List.of())), List.of()))),
                Map.of());
        DesiredState state = DesiredState.EMPTY.apply(delta);
        assertThat(state.peerSets().get(SET)).containsExactly(ID);
        assertThat(state.inconsistencies()).isEmpty();

        DesiredDelta orphan = new DesiredDelta(Map.of(), Map.of(), Map.of(),
                Map.of(new Membership(PeerSetKey.SelectorPeers.inNamespace("y", Selector.ALL), ID), true), Map.of(), Map.of());
        assertThatThrownBy(() -> state.apply(orphan)).isInstanceOf(IllegalStateException.class).hasMessageContaining("missing set");
    }

    @Test
    void inconsistenciesNameEveryBrokenReference() {
        LocalPod pod = new LocalPod(new PodKey("x", "a"), List.of(IpAddress.parse("10.0.0.1")), ID, List.of(POLICY), List.of(), null);
        DesiredState broken = new DesiredState(
                new TreeMap<>(),
                new TreeMap<>(Map.of(IpAddress.parse("10.0.0.1"), ID)),
                new TreeMap<>(),
                new TreeMap<>(Map.of(POLICY, new CompiledPolicy(POLICY, Set.of(Direction.EGRESS),
                        List.of(), List.of(new CompiledRule(0, false, List.of(SET), true, List.of()))))),
                new TreeMap<>(Map.of(pod.key(), pod)));

        assertThat(broken.inconsistencies()).containsExactlyInAnyOrder(
                "address 10.0.0.1 names missing identity id256",
                "policy x/p names missing set " + SET,
                "pod x/a has missing identity id256",
                "pod x/a lists x/p for INGRESS which it does not isolate");
    }
}
