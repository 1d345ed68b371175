package io.npmagent.iptables.kernel;

import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.harness.node.PodNetwork;
import io.npmagent.harness.node.PacketScenarios;
import io.npmagent.dataplane.backend.Backend;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.iptables.IptablesBackend;
import io.npmagent.iptables.TierScenario;
import io.npmagent.iptables.detect.IptablesVariant;
import io.npmagent.iptables.model.Family;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Real packets through the iptables backend, both variants: the shared {@link PacketScenarios}. */
class IptablesEnforcementKernelTest {
    private PodNetwork net;
    /** The backends a test made: closed first, so no flow reader outlives the namespace it reads. */
    private final java.util.List<Backend> backends = new java.util.ArrayList<>();

    @AfterEach
    void remove() {
        backends.forEach(Backend::close);
        if (net != null) {
            net.close();
        }
    }

    /** Pods a, b and c for {@code variant}, which needs ipset and its restore command. */
    private PodNetwork network(IptablesVariant variant) {
        KernelTestSupport.require("ipset", variant.restore(Family.IPV4));
        net = PodNetwork.create("a", "b", "c");
        return net;
    }

    private Backend backend(IptablesVariant variant, PodNetwork net) {
        Backend b = new IptablesBackend(variant, net.node().runner(), new Metrics(new PrometheusRegistry()), IptablesBackend.Settings.DEFAULTS);
        backends.add(b);
        return b;
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void policiesDecideWhichConnectionsGetThrough(IptablesVariant variant) {
        PodNetwork n = network(variant);
        PacketScenarios.policiesDecideWhichConnectionsGetThrough(n, backend(variant, n));
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void tiersDecideAroundNetworkPolicy(IptablesVariant variant) {
        PodNetwork n = network(variant);
        PacketScenarios.tiersDecideAroundNetworkPolicy(n, backend(variant, n));
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void aPodsConnectionsToItsOwnNodeMeetClusterPolicies(IptablesVariant variant) {
        PodNetwork n = network(variant);
        PacketScenarios.aPodsConnectionsToItsOwnNodeMeetClusterPolicies(n, backend(variant, n));
    }

    /** ClusterNetworkPolicy tiers, the desired state built by hand (fail closed included). */
    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void tiersDecideAroundNetworkPolicyByHand(IptablesVariant variant) {
        PodNetwork n = network(variant);
        TierScenario.tiersDecideAroundNetworkPolicy(n, backend(variant, n));
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void aNewConnectionOnAReusedPortMeetsThePolicyOfNow(IptablesVariant variant) {
        PodNetwork n = network(variant);
        PacketScenarios.aNewConnectionOnAReusedPortMeetsThePolicyOfNow(n, backend(variant, n));
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void serviceTrafficIsJudgedOnTheBackend(IptablesVariant variant) {
        PodNetwork n = network(variant);
        PacketScenarios.serviceTrafficIsJudgedOnTheBackend(n, backend(variant, n));
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void aPodReachingItselfThroughItsServiceMeetsItsPolicies(IptablesVariant variant) {
        PodNetwork n = network(variant);
        PacketScenarios.aPodReachingItselfThroughItsServiceMeetsItsPolicies(n, backend(variant, n));
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void serviceTrafficToARemoteBackendIsJudgedOnIt(IptablesVariant variant) {
        PodNetwork n = network(variant);
        PacketScenarios.serviceTrafficToARemoteBackendIsJudgedOnIt(n, backend(variant, n));
    }

    /** Pods on a bridge (the CNI bridge plugin's layout): Service traffic routed in and out of the bridge, judged as on veths, hairpin included. */
    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void onABridgeServiceTrafficIsJudgedAfterDnatAndBeforeSnat(IptablesVariant variant) {
        KernelTestSupport.require("ipset", variant.restore(Family.IPV4));
        net = PodNetwork.createBridged("a", "b", "c");
        Backend b = backend(variant, net);
        PacketScenarios.serviceTrafficIsJudgedOnTheBackend(net, b);
        PacketScenarios.aPodReachingItselfThroughItsServiceMeetsItsPolicies(net, b);
        PacketScenarios.masqueradedServiceTrafficIsJudgedOnItsSource(net, b);
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void masqueradedServiceTrafficIsJudgedOnItsSource(IptablesVariant variant) {
        PodNetwork n = network(variant);
        PacketScenarios.masqueradedServiceTrafficIsJudgedOnItsSource(n, backend(variant, n));
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void anOpenServiceConnectionOutlivesAPolicyThatNowDeniesIt(IptablesVariant variant) {
        PodNetwork n = network(variant);
        PacketScenarios.anOpenServiceConnectionOutlivesAPolicyThatNowDeniesIt(n, backend(variant, n));
    }

    /** The jump from FORWARD deleted by hand (both families), then every ipset emptied. */
    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void driftIsRepaired(IptablesVariant variant) {
        PodNetwork pods = network(variant);
        PacketScenarios.driftIsRepaired(pods, backend(variant, pods), new PacketScenarios.Tamper() {
            @Override
            public void unhookB(PodNetwork n) {
                for (Family f : Family.values()) {
                    String iptables = (f == Family.IPV4 ? "iptables-" : "ip6tables-") + variant.backendName().substring("iptables-".length());
                    n.node().must(iptables, "-w", "-F", "NPM-FORWARD");
                }
            }

            @Override
            public void forgetPeers(PodNetwork n) {
                n.node().must("ipset", "flush");
            }
        });
    }

    /** Flow verdicts: a default deny naming both isolating policies (IPv4 and IPv6), an Admin Deny naming tier, policy and rule. */
    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void flowVerdictsNameWhatDecided(IptablesVariant variant) {
        PodNetwork n = network(variant);
        PacketScenarios.flowVerdictsNameWhatDecided(n, backend(variant, n));
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void flowsTurnOnAndOffLive(IptablesVariant variant) {
        PodNetwork n = network(variant);
        PacketScenarios.flowsTurnOnAndOffLive(n, backend(variant, n));
    }

    /** 2,000 new flows at 20 reports a second: at most the rate reported, the rest counted lost, never reported. */
    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void flowReportsStayWithinTheirRate(IptablesVariant variant) {
        PodNetwork n = network(variant);
        PacketScenarios.flowReportsStayWithinTheirRate(n, backend(variant, n));
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void aRestartedAgentKeepsEnforcingWhileItAdopts(IptablesVariant variant) {
        PacketScenarios.aRestartedAgentKeepsEnforcingWhileItAdopts(network(variant), n -> backend(variant, n));
    }
}
