package io.npmagent.iptables.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.flow.FlowSettings;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.harness.node.PodNetwork;
import io.npmagent.iptables.FlowScenario;
import io.npmagent.iptables.IptablesBackend;
import io.npmagent.iptables.detect.IptablesVariant;
import io.npmagent.iptables.ipset.IpsetFlowSets;
import io.npmagent.iptables.model.Family;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Flow verdicts on both iptables variants with real packets ({@link FlowScenario}): NFLOG read in the test's node namespace. */
class IptablesFlowKernelTest {
    private static final FlowSettings SETTINGS = new FlowSettings(true, false, 1000, Duration.ofMinutes(10));
    private PodNetwork net;
    private FlowScenario scenario;

    private IptablesBackend backend(IptablesVariant variant) {
        KernelTestSupport.require("ipset", variant.restore(Family.IPV4), "python3", "timeout", "bash", "sysctl");
        net = PodNetwork.create("a", "b", "c");
        return new IptablesBackend(variant, net.node().runner(), new Metrics(new PrometheusRegistry()), IptablesBackend.Settings.DEFAULTS);
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

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void retriesFromNewSourcePortsAreOneCountedFlow(IptablesVariant variant) {
        IptablesBackend b = backend(variant);
        scenario = new FlowScenario(net, b, SETTINGS);
        scenario.retriesFromNewSourcePortsAreOneCountedFlow();
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void uninstallRemovesTheFlowSets(IptablesVariant variant) {
        IptablesBackend b = backend(variant);
        scenario = new FlowScenario(net, b, SETTINGS);
        String listed = net.node().must("ipset", "list", "-n").stdout();
        assertThat(IpsetFlowSets.present(listed)).isEqualTo(IpsetFlowSets.names());
        b.uninstall();
        assertThat(net.node().must("ipset", "list", "-n").stdout()).doesNotContain("npm-");
    }
}
