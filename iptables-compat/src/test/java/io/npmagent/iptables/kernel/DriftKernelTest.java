package io.npmagent.iptables.kernel;

import static io.npmagent.dataplane.model.PolicyFixtures.labels;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static io.npmagent.dataplane.model.PolicyFixtures.peers;
import static io.npmagent.dataplane.model.PolicyFixtures.pods;
import static io.npmagent.dataplane.model.PolicyFixtures.policy;
import static io.npmagent.dataplane.model.PolicyFixtures.rule;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.harness.node.NetworkNamespace;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.dataplane.batch.BatchQueue;
import io.npmagent.dataplane.batch.ManualScheduler;
import io.npmagent.dataplane.batch.MutableClock;
import io.npmagent.dataplane.batch.QueueConfig;
import io.npmagent.dataplane.batch.RetryPolicy;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.npmagent.iptables.IptablesBackend;
import io.npmagent.iptables.detect.IptablesVariant;
import io.npmagent.iptables.model.Family;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Drift repaired by the queue's reconcile periods, between batches: a dispatch chain flushed by hand
 * within one period (a quick reconcile lists it), a set member deleted by hand within
 * {@link BatchQueue#FULL_RECONCILE_EVERY} (the full one compares members).
 */
class DriftKernelTest {
    private NetworkNamespace ns;

    @AfterEach
    void remove() {
        if (ns != null) {
            ns.close();
        }
    }

    @Test
    void aRuleDeletedByHandComesBackWithinOneReconcilePeriod() {
        KernelTestSupport.require("ipset", "iptables-nft-restore");
        ns = NetworkNamespace.forTest("drift");
        ManualScheduler scheduler = new ManualScheduler();
        IptablesBackend backend = new IptablesBackend(IptablesVariant.NFT, ns.runner(), new Metrics(new PrometheusRegistry()),
                IptablesBackend.Settings.DEFAULTS);
        BatchQueue queue = new BatchQueue(backend, QueueConfig.FOREGROUND, RetryPolicy.DEFAULTS, new MutableClock(), scheduler,
                new Metrics(new PrometheusRegistry()));
        queue.reconcileEvery(Duration.ofSeconds(30));
        queue.start();
        PolicyCompiler compiler = new PolicyCompiler(null);
        queue.submit(compiler.apply(new ClusterEvent.PodUpserted(Pod.builder("x", "a").labels(labels("app", "a")).ip("10.0.0.1").build())).delta());
        queue.submit(compiler.apply(new ClusterEvent.PodUpserted(Pod.builder("x", "b").labels(labels("app", "b")).ip("10.0.0.2").build())).delta());
        queue.submit(compiler.apply(new ClusterEvent.PolicyUpserted(policy("x", "p").select(match("app", "a"))
                .ingress(rule(peers(pods(match("app", "b"))), null)).build())).delta());
        String before = save();
        ns.must("iptables-nft", "-F", "NPM-INGRESS");
        assertThat(save()).isNotEqualTo(before).doesNotContain("-A NPM-INGRESS");

        scheduler.tick(Duration.ofSeconds(30));

        assertThat(save()).isEqualTo(before);

        String sets = ipsets();
        String set = sets.lines().filter(l -> l.startsWith("add ") && l.endsWith(" 10.0.0.2")).findFirst().orElseThrow().split(" ")[1];
        ns.must("ipset", "del", set, "10.0.0.2");
        assertThat(ipsets()).isNotEqualTo(sets);
        for (int period = 2; period <= BatchQueue.FULL_RECONCILE_EVERY; period++) {
            scheduler.tick(Duration.ofSeconds(30));
        }
        assertThat(ipsets()).isEqualTo(sets);
    }

    private String ipsets() {
        return ns.must("ipset", "save").stdout();
    }

    private String save() {
        return String.join("\n", ns.must(IptablesVariant.NFT.save(Family.IPV4), "-t", "filter").stdout()
                .lines().filter(l -> !l.startsWith("#")).toList());
    }
}
