package io.npmagent.iptables.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.exec.CommandRunner;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.harness.node.NetworkNamespace;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.npmagent.iptables.IptablesBackend;
import io.npmagent.iptables.IptablesBackendContract;
import io.npmagent.iptables.detect.IptablesVariant;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link IptablesBackendContract} against the real tools and kernel, in a network namespace of its
 * own, for both variants; and, here only, the restore latencies a real process takes.
 */
class IptablesBackendKernelTest {

    /** The contract in a fresh namespace. */
    abstract static class InNamespace extends IptablesBackendContract {
        private NetworkNamespace ns;

        @Override
        protected CommandRunner openKernel() {
            KernelTestSupport.require("ipset", "iptables-nft-restore", "iptables-legacy-restore");
            ns = NetworkNamespace.forTest("ipt");
            return ns.runner();
        }

        @Override
        protected void closeKernel() {
            ns.close();
        }
    }

    @Nested
    class IptablesNft extends InNamespace {
        @Override
        protected IptablesVariant variant() {
            return IptablesVariant.NFT;
        }
    }

    @Nested
    class IptablesLegacy extends InNamespace {
        @Override
        protected IptablesVariant variant() {
            return IptablesVariant.LEGACY;
        }
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void restoreLatenciesAndKernelCountsAreExportedInSeconds(IptablesVariant variant) throws Exception {
        KernelTestSupport.require("ipset", "iptables-nft-restore", "iptables-legacy-restore");
        PrometheusRegistry registry = new PrometheusRegistry();
        PolicyCompiler compiler = new PolicyCompiler(null);
        try (NetworkNamespace ns = NetworkNamespace.forTest("ipt")) {
            Metrics metrics = new Metrics(registry);
            IptablesBackend b = new IptablesBackend(variant, ns.runner(), metrics, IptablesBackend.Settings.DEFAULTS);
            for (ClusterEvent e : IptablesBackendContract.cluster()) {
                b.apply(new Batch(compiler.apply(e).delta()));
            }
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter.create().write(out, registry.scrape());
            String text = out.toString(java.nio.charset.StandardCharsets.UTF_8);

            double restores = metrics.iptablesRestoreLatency.labelValues("apply").getCount();
            double seconds = metrics.iptablesRestoreLatency.labelValues("apply").getSum();
            assertThat(restores).isGreaterThanOrEqualTo(4);
            assertThat(seconds / restores).as("a restore in a tiny namespace takes milliseconds, i.e. well under a second")
                    .isGreaterThan(0).isLessThan(0.5);
            assertThat(text).contains("npm_linux_iptables_restore_latency_seconds_bucket{operation=\"apply\",le=\"0.001\"}")
                    .contains("npm_linux_iptables_restore_latency_seconds_bucket{operation=\"apply\",le=\"120.0\"}")
                    .contains("npm_ipset_restore_latency_seconds_count ")
                    .contains("npm_num_iptables_rules ").contains("npm_num_ipsets ").contains("npm_num_ipset_entries ");
            assertThat(metrics.numIpsets.get()).isEqualTo(b.status().sets()).isGreaterThan(5);
            assertThat(metrics.numIptablesRules.get()).isEqualTo(b.status().rules()).isGreaterThan(20);
        }
    }
}
