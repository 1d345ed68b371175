package io.npmagent.harness.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** When a Service counts as programmed: kube-proxy's DNAT to each ready backend is in its rules, in either mode. */
class ServiceTargetsTest {
    private static final ServiceTargets.Target V4 = new ServiceTargets.Target("x/server", "10.96.21.63", "IPv4", 8080, "TCP",
            "x/server", List.of("10.250.0.2:80"));
    private static final ServiceTargets.Target V6 = new ServiceTargets.Target("x/server", "fd00:10:96::5", "IPv6", 8080, "TCP",
            "x/server", List.of("[fd50::2]:80"));

    @Test
    void iptablesModeNamesTheBackendInItsDnat() {
        String rules = "-A KUBE-SEP-ABC -p tcp -m comment --comment \"x/server\" -m tcp -j DNAT --to-destination 10.250.0.2:80\n"
                + "-A KUBE-SEP-DEF -p tcp -m comment --comment \"x/server\" -m tcp -j DNAT --to-destination [fd50::2]:80\n";
        assertThat(ServiceTargets.firstUnprogrammed(List.of(V4, V6), rules)).isNull();
    }

    @Test
    void nftablesModeToo() {
        String rules = "chain endpoint-BGWYVAHK-x/server/tcp/__10.250.0.2/80 {\n\t\tmeta l4proto tcp dnat to 10.250.0.2:80\n}\n";
        assertThat(ServiceTargets.firstUnprogrammed(List.of(V4), rules)).isNull();
        assertThat(ServiceTargets.firstUnprogrammed(List.of(V4, V6), rules)).as("no IPv6 backend yet").isEqualTo(V6);
    }

    @Test
    void aBackendOnAnotherPortIsNotThisOne() {
        String rules = "-A KUBE-SEP-ABC -p tcp -j DNAT --to-destination 10.250.0.2:8080\n";
        assertThat(ServiceTargets.firstUnprogrammed(List.of(V4), rules)).isEqualTo(V4);
    }
}
