package io.npmagent.iptables.kernel;

import static io.npmagent.dataplane.model.PolicyFixtures.labels;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static io.npmagent.dataplane.model.PolicyFixtures.peers;
import static io.npmagent.dataplane.model.PolicyFixtures.pods;
import static io.npmagent.dataplane.model.PolicyFixtures.policy;
import static io.npmagent.dataplane.model.PolicyFixtures.rule;
import static org.assertj.core.api.Assertions.assertThat;

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

/** A rule deleted by hand comes back at the next reconcile period, run by the queue between batches. */
class DriftKernelTest {
    private Netns ns;

    @AfterEach
    void remove() {
        if (ns != null) {
            ns.close();
        }
    }

    @Test
    void aRuleDeletedByHandComesBackWithinOneReconcilePeriod() {
        KernelTestSupport.require("ipset", "iptables-nft-restore");
        ns = Netns.create("drift");
        ManualScheduler scheduler = new ManualScheduler();
        IptablesBackend backend = new IptablesBackend(IptablesVariant.NFT, ns.runner(), new Metrics(new PrometheusRegistry()),
                IptablesBackend.Settings.DEFAULTS);
        BatchQueue queue = new BatchQueue(backend, QueueConfig.FOREGROUND, RetryPolicy.DEFAULTS, new MutableClock(), scheduler,
                new Metrics(new PrometheusRegistry()));
        queue.reconcileEvery(Duration.ofSeconds(30));
        PolicyCompiler compiler = new PolicyCompiler(null);
        queue.submit(compiler.apply(new ClusterEvent.PodUpserted(Pod.builder("x", "a").labels(labels("app", "a")).ip("10.0.0.1").build())).delta());
        queue.submit(compiler.apply(new ClusterEvent.PolicyUpserted(policy("x", "p").select(match("app", "a"))
                .ingress(rule(peers(pods(match("app", "b"))), null)).build())).delta());
        String before = save();
        ns.must("iptables-nft", "-F", "NPM-INGRESS");
        assertThat(save()).isNotEqualTo(before).doesNotContain("-A NPM-INGRESS");

        scheduler.tick(Duration.ofSeconds(30));

        assertThat(save()).isEqualTo(before);
    }

    private String save() {
        return String.join("\n", ns.must(IptablesVariant.NFT.save(Family.IPV4), "-t", "filter").stdout()
                .lines().filter(l -> !l.startsWith("#")).toList());
    }
}
