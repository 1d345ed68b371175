package io.npmagent.iptables.nft;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.flow.FlowSettings;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.harness.node.PodNetwork;
import io.npmagent.iptables.FlowScenario;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Flow verdicts on nft with real packets ({@link FlowScenario}): NFLOG read in the test's node namespace. */
class NftFlowKernelTest {
    private static final FlowSettings SETTINGS = new FlowSettings(true, false, 1000, Duration.ofMinutes(10));
    private PodNetwork net;
    private NftBackend backend;
    private FlowScenario scenario;

    @BeforeEach
    void network() {
        KernelTestSupport.require("nft", "python3", "timeout", "bash", "sysctl");
        net = PodNetwork.create("a", "b", "c");
        backend = new NftBackend(net.node().runner(), new Metrics(new PrometheusRegistry()), Duration.ofSeconds(30));
    }

    @AfterEach
    void teardown() {
        if (scenario != null) {
            scenario.close();
        }
        if (net != null) {
            net.close();
        }
    }

    @Test
    void retriesFromNewSourcePortsAreOneCountedFlow() {
        scenario = new FlowScenario(net, backend, SETTINGS);
        scenario.retriesFromNewSourcePortsAreOneCountedFlow();
    }

    @Test
    void uninstallRemovesTheFlowSetsWithTheTable() {
        scenario = new FlowScenario(net, backend, SETTINGS);
        assertThat(net.node().run("nft", "list", "set", "inet", "npm_agent", "flows_in4").exitCode()).isZero();
        backend.uninstall();
        assertThat(net.node().run("nft", "list", "set", "inet", "npm_agent", "flows_in4").exitCode()).isNotZero();
    }
}
