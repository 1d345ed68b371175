package io.npmagent.bpf;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.bpf.libbpf.BpfMap;
import io.npmagent.bpf.maps.EndpointMap;
import io.npmagent.bpf.maps.IpcacheMap;
import io.npmagent.bpf.testing.BpfFs;
import io.npmagent.dataplane.backend.Backend;
import io.npmagent.dataplane.bandwidth.BandwidthSettings;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.harness.node.PacketScenarios;
import io.npmagent.harness.node.PodNetwork;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
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

    /** The pods again, on a bridge (the CNI bridge plugin's layout), and a backend on them. */
    private Backend onABridge() {
        net.close();
        net = PodNetwork.createBridged("a", "b", "c");
        return backend(net);
    }

    @Test
    void policiesDecideWhichConnectionsGetThrough() {
        PacketScenarios.policiesDecideWhichConnectionsGetThrough(net, backend(net));
    }

    @Test
    void flowVerdictsNameWhatDecided() {
        PacketScenarios.flowVerdictsNameWhatDecided(net, backend(net));
    }

    @Test
    void allowedFlowsAreReportedWhenAskedFor() {
        PacketScenarios.allowedFlowsAreReportedWhenAskedFor(net, backend(net));
    }

    @Test
    void flowsTurnOnAndOffLive() {
        PacketScenarios.flowsTurnOnAndOffLive(net, backend(net));
    }

    @Test
    void flowReportsStayWithinTheirRate() {
        PacketScenarios.flowReportsStayWithinTheirRate(net, backend(net));
    }

    @Test
    void tiersDecideAroundNetworkPolicy() {
        PacketScenarios.tiersDecideAroundNetworkPolicy(net, backend(net));
    }

    @Test
    void aPodsConnectionsToItsOwnNodeMeetClusterPolicies() {
        PacketScenarios.aPodsConnectionsToItsOwnNodeMeetClusterPolicies(net, backend(net));
    }

    @Test
    void aNewConnectionOnAReusedPortMeetsThePolicyOfNow() {
        PacketScenarios.aNewConnectionOnAReusedPortMeetsThePolicyOfNow(net, backend(net));
    }

    @Test
    void serviceTrafficIsJudgedOnTheBackend() {
        PacketScenarios.serviceTrafficIsJudgedOnTheBackend(net, backend(net));
    }

    @Test
    void aPodReachingItselfThroughItsServiceMeetsItsPolicies() {
        PacketScenarios.aPodReachingItselfThroughItsServiceMeetsItsPolicies(net, backend(net));
    }

    /**
     * Pods on a bridge (the CNI bridge plugin's layout): every Service connection comes in from the
     * bridge, whichever pod sent it, and goes out by it, whichever pod it goes to. The forward hook still
     * judges egress on the pod that sent it (it admitted them all unjudged before npm_deferred) and a
     * masqueraded connection on its source before SNAT at the pod it goes to (unjudged before
     * npm_local); a pod through its own Service meets its policies (by address there: the bridge is
     * every routed packet's way in and out).
     */
    @Test
    void onABridgeServiceTrafficIsJudgedOnThePodThatSentIt() {
        Backend b = onABridge();
        PacketScenarios.serviceTrafficIsJudgedOnTheBackend(net, b);
        PacketScenarios.aPodReachingItselfThroughItsServiceMeetsItsPolicies(net, b);
        PacketScenarios.masqueradedServiceTrafficIsJudgedOnItsSource(net, b);
    }

    /** Found through neighbour entries of the backend's own, which go with an uninstall. */
    @Test
    void onABridgeSilentPodsAreEnforcedFromTheFirstBatch() {
        Backend b = onABridge();
        PacketScenarios.silentPodsOnABridgeAreEnforcedFromTheFirstBatch(net, b);
        assertThat(((BpfBackend) b).unplaced()).as("every pod found").isEmpty();
        assertThat(net.node().must("ip", "-o", "neigh", "show", "protocol", InterfaceResolver.NEIGH_PROTOCOL).stdout()).as("our managed entries")
                .contains("managed");
        b.uninstall();
        assertThat(net.node().must("ip", "-o", "neigh", "show", "protocol", InterfaceResolver.NEIGH_PROTOCOL).stdout()).as("gone with an uninstall")
                .isBlank();
    }

    @Test
    void serviceTrafficToARemoteBackendIsJudgedOnIt() {
        PacketScenarios.serviceTrafficToARemoteBackendIsJudgedOnIt(net, backend(net));
    }

    @Test
    void masqueradedServiceTrafficIsJudgedOnItsSource() {
        PacketScenarios.masqueradedServiceTrafficIsJudgedOnItsSource(net, backend(net));
    }

    @Test
    void anOpenServiceConnectionOutlivesAPolicyThatNowDeniesIt() {
        PacketScenarios.anOpenServiceConnectionOutlivesAPolicyThatNowDeniesIt(net, backend(net));
    }

    /**
     * Agent after agent on one node (a DaemonSet's pod deleted again and again): each links its forward
     * hook beside its predecessor's and takes over, however many came before. On the real node (kernel
     * 6.18) the third generation found its priority taken though no link held it.
     */
    @Test
    void everyGenerationOfAgentHasItsForwardHook() {
        for (int generation = 1; generation <= 5; generation++) {
            BpfBackend b = (BpfBackend) backend(net);
            assertThat(b.forwardHookProblem()).as("generation " + generation).isNull();
            b.close();
            started.remove(b);
        }
    }

    @Test
    void aRestartedAgentKeepsEnforcingWhileItAdopts() {
        PacketScenarios.aRestartedAgentKeepsEnforcingWhileItAdopts(net, this::backend);
    }

    /** The programs detached from b's interface by hand (as a CNI may), then the ipcache emptied. */
    @Test
    void driftIsRepaired() {
        PacketScenarios.driftIsRepaired(net, backend(net), new PacketScenarios.Tamper() {
            @Override
            public void unhookB(PodNetwork n) {
                n.node().must("tc", "filter", "del", "dev", n.hostInterface("b"), "ingress");
                n.node().must("tc", "filter", "del", "dev", n.hostInterface("b"), "egress");
            }

            @Override
            public void forgetPeers(PodNetwork n) {
                try (BpfMap ipcache = BpfMap.openPinned(fs.root().resolve("npm").resolve(IpcacheMap.NAME))) {
                    ipcache.entries().forEach(kv -> ipcache.delete(kv[0]));
                }
            }
        });
    }

    /** An agent of another version left npm_endpoints with an 8-byte value: set aside, replaced, removed. */
    @Test
    void aPinOfAnotherLayoutIsSetAsideAndReplaced() throws Exception {
        Path pins = fs.root().resolve("npm");
        Files.createDirectories(pins);
        try (BpfMap old = BpfMap.create(BpfMap.TYPE_HASH, EndpointMap.NAME, EndpointMap.KEY_SIZE, 8, EndpointMap.MAX_ENTRIES, 0)) {
            old.pin(pins.resolve(EndpointMap.NAME));
        }
        Backend b = backend(net);
        assertThat(pins.resolve(EndpointMap.NAME + PinnedMaps.ASIDE)).as("set aside until our programs run").exists();

        PacketScenarios.policiesDecideWhichConnectionsGetThrough(net, b);
        assertThat(pins.resolve(EndpointMap.NAME + PinnedMaps.ASIDE)).as("removed once they do").doesNotExist();
        try (BpfMap now = BpfMap.openPinned(pins.resolve(EndpointMap.NAME))) {
            assertThat(now.valueSize()).isEqualTo(EndpointMap.VALUE_SIZE);
        }
    }
}
