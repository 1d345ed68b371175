package io.npmagent.harness.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeAddress;
import io.kubernetes.client.openapi.models.V1NodeSpec;
import io.kubernetes.client.openapi.models.V1NodeStatus;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PodRoutesMainTest {
    private static V1Node node(String name, List<String> cidrs, String... internalIps) {
        return new V1Node().metadata(new V1ObjectMeta().name(name)).spec(new V1NodeSpec().podCIDRs(cidrs))
                .status(new V1NodeStatus().addresses(List.of(internalIps).stream().map(a -> new V1NodeAddress().type("InternalIP").address(a)).toList()));
    }

    @Test
    void everyOtherNodesRangesGoViaItsAddressOfTheSameFamily() {
        List<V1Node> nodes = List.of(
                node("a", List.of("10.244.0.0/24", "fd00:10:244::/64"), "10.250.0.10", "fd00:10:250::10"),
                node("b", List.of("10.244.1.0/24", "fd00:10:244:1::/64"), "10.250.0.11", "fd00:10:250::11"),
                node("c", List.of("10.244.2.0/24"), "10.250.0.12"),
                // Not yet given ranges, or no address of the range's family: nothing to route yet.
                node("d", List.of()),
                node("e", List.of("fd00:10:244:4::/64"), "10.250.0.14"));
        assertThat(PodRoutesMain.wanted(nodes, "a")).containsExactly(Map.entry("10.244.1.0/24", "10.250.0.11"),
                Map.entry("fd00:10:244:1::/64", "fd00:10:250::11"), Map.entry("10.244.2.0/24", "10.250.0.12"));
    }

    @Test
    void onlyWhatDiffersIsChangedAndRangesOfNodesGoneAreRemoved() {
        Map<String, String> want = Map.of("10.244.1.0/24", "10.250.0.11", "fd00:10:244:1::/64", "fd00:10:250::11");
        List<String> v4 = List.of("10.244.1.0/24 via 10.250.0.11 dev eth0 ", "10.244.3.0/24 via 10.250.0.13 dev eth0 ");
        List<String> v6 = List.of("fd00:10:244:1::/64 via fd00:10:250::99 dev eth0 metric 1024 pref medium");
        assertThat(PodRoutesMain.changes(want, v4, v6)).containsExactlyInAnyOrder(
                List.of("ip", "route", "replace", "fd00:10:244:1::/64", "via", "fd00:10:250::11", "dev", "eth0", "proto", "200"),
                List.of("ip", "route", "del", "10.244.3.0/24", "proto", "200"));
        assertThat(PodRoutesMain.changes(Map.of("10.244.1.0/24", "10.250.0.11"), List.of("10.244.1.0/24 via 10.250.0.11 dev eth0"), List.of()))
                .isEmpty();
    }
}
