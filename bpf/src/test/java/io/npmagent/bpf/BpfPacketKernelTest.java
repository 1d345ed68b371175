package io.npmagent.bpf;

import io.npmagent.bpf.testing.BpfFs;
import io.npmagent.dataplane.backend.Backend;
import io.npmagent.dataplane.bandwidth.BandwidthSettings;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.iptables.kernel.KernelTestSupport;
import io.npmagent.iptables.kernel.PacketScenarios;
import io.npmagent.iptables.kernel.PodNetwork;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Real packets through the eBPF backend: the stories every backend is told ({@link PacketScenarios}). */
class BpfPacketKernelTest {
    @RegisterExtension
    final BpfFs fs = new BpfFs();
    private PodNetwork net;
    private final List<Backend> started = new ArrayList<>();

    @BeforeEach
    void network() {
        KernelTestSupport.require("ip", "python3");
        net = PodNetwork.create("a", "b", "c");
    }

    @AfterEach
    void teardown() {
        started.forEach(Backend::close);
        if (net != null) {
            net.close();
        }
    }

    private Backend backend(PodNetwork n) {
        Backend b = new BpfBackend(fs.root().resolve("npm"), n.node().name(), n.node().runner(), BandwidthSettings.DEFAULTS, new Metrics(new PrometheusRegistry()));
        started.add(b);
        return b;
    }

    @Test
    void policiesDecideWhichConnectionsGetThrough() {
        PacketScenarios.policiesDecideWhichConnectionsGetThrough(net, backend(net));
    }

    @Test
    void aRestartedAgentKeepsEnforcingWhileItAdopts() {
        PacketScenarios.aRestartedAgentKeepsEnforcingWhileItAdopts(net, this::backend);
    }
}
