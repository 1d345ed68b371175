package io.npmagent.iptables.kernel;

import static io.npmagent.dataplane.model.PolicyFixtures.labels;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static io.npmagent.dataplane.model.PolicyFixtures.peers;
import static io.npmagent.dataplane.model.PolicyFixtures.pods;
import static io.npmagent.dataplane.model.PolicyFixtures.policy;
import static io.npmagent.dataplane.model.PolicyFixtures.port;
import static io.npmagent.dataplane.model.PolicyFixtures.ports;
import static io.npmagent.dataplane.model.PolicyFixtures.rule;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.harness.node.NetworkNamespace;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.batch.BatchQueue;
import io.npmagent.dataplane.batch.FlushResult;
import io.npmagent.dataplane.batch.ManualScheduler;
import io.npmagent.dataplane.batch.MutableClock;
import io.npmagent.dataplane.batch.QueueConfig;
import io.npmagent.dataplane.batch.RetryPolicy;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.npmagent.iptables.IptablesBackend;
import io.npmagent.iptables.detect.IptablesVariant;
import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.CommandRunner;
import io.npmagent.iptables.model.ChainId;
import io.npmagent.iptables.model.Family;
import io.npmagent.iptables.model.Names;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * One policy among a hundred that the kernel refuses: the batch fails as one transaction, is applied
 * part by part, 99 policies land, the bad one is reported with the kernel's words and retried later.
 * The refusal is real: the restore input for the bad policy's chain gets a rule with a match module
 * that does not exist, which iptables-restore rejects.
 */
class RefusedPolicyKernelTest {
    private NetworkNamespace ns;

    @AfterEach
    void remove() {
        if (ns != null) {
            ns.close();
        }
    }

    /** Adds an impossible rule to every restore that writes {@code chain}. */
    private record Poisoning(CommandRunner inner, String chain) implements CommandRunner {
        @Override
        public CommandResult run(List<String> argv, String stdin, Duration timeout) {
            if (argv.get(0).contains("tables") && argv.get(0).endsWith("-restore") && stdin.contains("-A " + chain + " ")) {
                stdin = stdin.replace("COMMIT\n", "-A " + chain + " -m npm-no-such-match -j RETURN\nCOMMIT\n");
            }
            return inner.run(argv, stdin, timeout);
        }

        @Override
        public boolean available(String program) {
            return inner.available(program);
        }
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void ninetyNineLandAndOneIsReported(IptablesVariant variant) {
        KernelTestSupport.require("ipset", variant.restore(Family.IPV4));
        ns = NetworkNamespace.forTest("refuse");
        PolicyKey bad = new PolicyKey("x", "p37");
        String badChain = Names.chain(new ChainId.PolicyChain(bad, Direction.INGRESS, Family.IPV4));
        PrometheusRegistry registry = new PrometheusRegistry();
        Metrics metrics = new Metrics(registry);
        IptablesBackend backend = new IptablesBackend(variant, new Poisoning(ns.runner(), badChain), metrics,
                IptablesBackend.Settings.DEFAULTS);
        MutableClock clock = new MutableClock();
        BatchQueue queue = new BatchQueue(backend, QueueConfig.DEFAULTS, RetryPolicy.DEFAULTS, clock, new ManualScheduler(), metrics);
        PolicyCompiler compiler = new PolicyCompiler(null);

        for (int i = 0; i < 100; i++) {
            queue.submit(compiler.apply(new ClusterEvent.PodUpserted(Pod.builder("x", "pod" + i)
                    .labels(labels("app", "a" + i)).ip("10.1." + (i / 250) + "." + (i % 250 + 1)).build())).delta());
        }
        for (int i = 0; i < 100; i++) {
            queue.submit(compiler.apply(new ClusterEvent.PolicyUpserted(policy("x", "p" + i).select(match("app", "a" + i))
                    .ingress(rule(peers(pods(match("app", "a" + ((i + 1) % 100)))), ports(port("TCP", 80)))).build())).delta());
        }

        FlushResult result = queue.flushNow();

        assertThat(result.oneTransaction()).isFalse();
        assertThat(result.failures()).singleElement().satisfies(f -> {
            assertThat(f.unit()).isEqualTo(new Batch.UnitKey.Policy(bad));
            assertThat(f.error()).contains(variant.restore(Family.IPV4));
        });
        String rules = ns.must(variant.save(Family.IPV4), "-t", "filter").stdout();
        assertThat(rules.lines().filter(l -> l.startsWith(":NPM-PI-"))).hasSize(99);
        assertThat(rules).doesNotContain(":" + badChain);
        // Each pod chain's final drop (the flow rules before it drop a known flow's packets too: not counted here).
        assertThat(rules.lines().filter(l -> l.contains("-j DROP") && !l.contains("--match-set npm-flows-")))
                .as("all 100 pods isolated, p37's fail closed").hasSize(100);
        assertThat(metrics.applyFailures.labelValues("policy").get()).isEqualTo(1.0);
        assertThat(metrics.iptablesRestoreFailures.labelValues("apply").get()).isGreaterThanOrEqualTo(2.0);

        clock.advance(Duration.ofSeconds(1));
        assertThat(queue.flushNow().failures()).as("still refused on retry").hasSize(1);
        assertThat(queue.failures().get(0).attempts()).isEqualTo(2);
    }
}
