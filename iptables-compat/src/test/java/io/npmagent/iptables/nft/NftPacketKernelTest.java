package io.npmagent.iptables.nft;

import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.iptables.kernel.KernelTestSupport;
import io.npmagent.iptables.kernel.PacketScenarios;
import io.npmagent.iptables.kernel.PodNetwork;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Real packets through the nft backend: the shared {@link PacketScenarios}. */
class NftPacketKernelTest {
    private PodNetwork net;

    @BeforeEach
    void network() {
        KernelTestSupport.require("nft", "python3", "timeout", "bash", "sysctl");
        net = PodNetwork.create("a", "b", "c");
    }

    @AfterEach
    void teardown() {
        if (net != null) {
            net.close();
        }
    }

    private static NftBackend backend(PodNetwork net) {
        return new NftBackend(net.node().runner(), new Metrics(new PrometheusRegistry()), Duration.ofSeconds(30));
    }

    @Test
    void policiesDecideWhichConnectionsGetThrough() {
        PacketScenarios.policiesDecideWhichConnectionsGetThrough(net, backend(net));
    }

    @Test
    void aRestartedAgentKeepsEnforcingWhileItAdopts() {
        PacketScenarios.aRestartedAgentKeepsEnforcingWhileItAdopts(net, NftPacketKernelTest::backend);
    }
}
