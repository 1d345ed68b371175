package io.npmagent.iptables.nft;

import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.harness.node.PacketScenarios;
import io.npmagent.iptables.TierScenario;
import io.npmagent.harness.node.PodNetwork;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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

    /** The backends a test made: closed first, so no flow reader outlives the namespace it reads. */
    private final java.util.List<NftBackend> backends = new java.util.ArrayList<>();

    @AfterEach
    void teardown() {
        backends.forEach(NftBackend::close);
        if (net != null) {
            net.close();
        }
    }

    private NftBackend backend(PodNetwork net) {
        NftBackend b = new NftBackend(net.node().runner(), new Metrics(new PrometheusRegistry()), Duration.ofSeconds(30));
        backends.add(b);
        return b;
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

    /** ClusterNetworkPolicy tiers, the desired state built by hand (fail closed included). */
    @Test
    void tiersDecideAroundNetworkPolicyByHand() {
        TierScenario.tiersDecideAroundNetworkPolicy(net, backend(net));
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

    /** Pods on a bridge (the CNI bridge plugin's layout): Service traffic routed in and out of the bridge, judged as on veths, hairpin included. */
    @Test
    void onABridgeServiceTrafficIsJudgedAfterDnatAndBeforeSnat() {
        net.close();
        net = PodNetwork.createBridged("a", "b", "c");
        NftBackend b = backend(net);
        PacketScenarios.serviceTrafficIsJudgedOnTheBackend(net, b);
        PacketScenarios.aPodReachingItselfThroughItsServiceMeetsItsPolicies(net, b);
        PacketScenarios.masqueradedServiceTrafficIsJudgedOnItsSource(net, b);
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

    /** b's ingress dispatch maps emptied by hand, then every peer set. */
    @Test
    void driftIsRepaired() {
        PacketScenarios.driftIsRepaired(net, backend(net), new PacketScenarios.Tamper() {
            @Override
            public void unhookB(PodNetwork n) {
                n.node().must("nft", "flush", "map", "inet", "npm_agent", "ingress4");
                n.node().must("nft", "flush", "map", "inet", "npm_agent", "ingress6");
            }

            @Override
            public void forgetPeers(PodNetwork n) {
                Matcher set = Pattern.compile("(?m)^\\s*set (\\S+) \\{").matcher(n.node().must("nft", "list", "sets", "inet").stdout());
                while (set.find()) {
                    n.node().must("nft", "flush", "set", "inet", "npm_agent", set.group(1));
                }
            }
        });
    }

    @Test
    void aRestartedAgentKeepsEnforcingWhileItAdopts() {
        PacketScenarios.aRestartedAgentKeepsEnforcingWhileItAdopts(net, this::backend);
    }
}
