package io.npmagent.dataplane.batch;

import static io.npmagent.dataplane.model.PolicyFixtures.labels;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static io.npmagent.dataplane.model.PolicyFixtures.peers;
import static io.npmagent.dataplane.model.PolicyFixtures.pods;
import static io.npmagent.dataplane.model.PolicyFixtures.policy;
import static io.npmagent.dataplane.model.PolicyFixtures.port;
import static io.npmagent.dataplane.model.PolicyFixtures.ports;
import static io.npmagent.dataplane.model.PolicyFixtures.rule;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.backend.Backend;
import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.backend.FakeBackend;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class BatchQueueTest {
    private final PolicyCompiler compiler = new PolicyCompiler(null);
    private final FakeBackend backend = new FakeBackend();
    private final MutableClock clock = new MutableClock();
    private final ManualScheduler scheduler = new ManualScheduler();
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final Metrics metrics = new Metrics(registry);
    private static final RetryPolicy RETRY = new RetryPolicy(Duration.ofSeconds(1), Duration.ofSeconds(8));

    private BatchQueue queue(QueueConfig config) {
        return new BatchQueue(backend, config, RETRY, clock, scheduler, metrics);
    }

    private void event(BatchQueue queue, ClusterEvent e) {
        queue.submit(compiler.apply(e).delta());
    }

    private static NetworkPolicy webPolicy(String name, int port) {
        return policy("x", name).select(match("app", "web"))
                .ingress(rule(peers(pods(match("app", "api"))), ports(port("TCP", port)))).build();
    }

    @BeforeEach
    void cluster() {
        // Its own metrics, so the tests below see only their own observations.
        BatchQueue setup = new BatchQueue(backend, QueueConfig.FOREGROUND, RETRY, clock, scheduler, new Metrics(new PrometheusRegistry()));
        event(setup, new ClusterEvent.PodUpserted(Pod.builder("x", "web").labels(labels("app", "web")).ip("10.0.0.1").build()));
        event(setup, new ClusterEvent.PodUpserted(Pod.builder("x", "api").labels(labels("app", "api")).ip("10.0.0.2").build()));
        assertThat(backend.batches()).hasSize(2);
    }

    @Test
    void fromTheStartEachReconcilePeriodFlushesWhatIsDueThenReconcilesQuicklyAndEveryThirtiethFully() {
        BatchQueue q = queue(QueueConfig.DEFAULTS);
        q.reconcileEvery(Duration.ofSeconds(10));
        scheduler.tick(Duration.ofSeconds(10));
        assertThat(backend.reconcileCounts()).as("none before the start: the first whole state is not in yet").containsExactly(0, 0);
        q.start();
        event(q, new ClusterEvent.PolicyUpserted(webPolicy("p", 80)));
        scheduler.tick(Duration.ofSeconds(10));
        assertThat(backend.state()).as("the pending change went first").isEqualTo(compiler.snapshot());
        assertThat(backend.reconcileCounts()).as("full, quick").containsExactly(0, 1);

        for (int period = 2; period <= BatchQueue.FULL_RECONCILE_EVERY; period++) {
            scheduler.tick(Duration.ofSeconds(10));
        }
        assertThat(backend.reconcileCounts()).containsExactly(1, BatchQueue.FULL_RECONCILE_EVERY - 1);
        for (int period = 1; period <= BatchQueue.FULL_RECONCILE_EVERY; period++) {
            scheduler.tick(Duration.ofSeconds(10));
        }
        assertThat(backend.reconcileCounts()).containsExactly(2, 2 * (BatchQueue.FULL_RECONCILE_EVERY - 1));
    }

    @Test
    void foregroundAppliesEachEventAsItsOwnTransaction() {
        BatchQueue q = queue(QueueConfig.FOREGROUND);
        for (int i = 0; i < 5; i++) {
            event(q, new ClusterEvent.PolicyUpserted(webPolicy("p" + i, 80 + i)));
        }
        assertThat(backend.batches()).hasSize(2 + 5);
        assertThat(backend.state()).isEqualTo(compiler.snapshot());
    }

    @Test
    void adaptiveSendsALoneChangeAtOnceWithoutWaitingForTheInterval() {
        BatchQueue q = queue(QueueConfig.DEFAULTS);
        q.start();
        event(q, new ClusterEvent.PolicyUpserted(webPolicy("p", 80)));
        assertThat(scheduler.requested()).as("a wake-up, not the timer").isEqualTo(1);

        scheduler.runRequested();

        assertThat(backend.batches()).hasSize(3);
        assertThat(backend.state()).isEqualTo(compiler.snapshot());
        assertThat(q.idle()).isTrue();
    }

    @Test
    void adaptiveCoalescesABurstIntoOneBatchAndTheLatestVersionWins() {
        BatchQueue q = queue(QueueConfig.DEFAULTS);
        q.start();
        for (int i = 0; i < 1000; i++) {
            event(q, new ClusterEvent.PolicyUpserted(webPolicy("p" + i % 250, 80 + i / 250)));
        }
        assertThat(scheduler.requested()).as("one wake-up for the whole burst").isEqualTo(1);

        scheduler.runRequested();

        assertThat(backend.batches()).as("the burst is one batch").hasSize(3);
        assertThat(backend.lastBatch().policyChanges()).as("each policy once, at its latest version").isEqualTo(250);
        assertThat(backend.state()).isEqualTo(compiler.snapshot());
    }

    @Test
    void adaptiveSendsWhatArrivesDuringABatchTogetherInTheNext() {
        BatchQueue[] q = new BatchQueue[1];
        int[] applies = {0};
        InterceptingBackend slow = new InterceptingBackend(backend, batch -> {
            if (applies[0]++ == 0) { // while the first batch is in the kernel, 50 more changes arrive
                for (int i = 0; i < 50; i++) {
                    event(q[0], new ClusterEvent.PolicyUpserted(webPolicy("during" + i, 80)));
                }
            }
        });
        q[0] = new BatchQueue(slow, QueueConfig.DEFAULTS, RETRY, clock, scheduler, metrics);
        q[0].start();
        event(q[0], new ClusterEvent.PolicyUpserted(webPolicy("first", 80)));

        scheduler.runRequested();
        assertThat(backend.lastBatch().policyChanges()).isEqualTo(1);
        assertThat(scheduler.requested()).as("the 50 asked for one more batch").isEqualTo(1);
        scheduler.runRequested();

        assertThat(backend.batches()).as("two batches in all: the lone change and the 50").hasSize(4);
        assertThat(backend.lastBatch().policyChanges()).isEqualTo(50);
        assertThat(backend.state()).isEqualTo(compiler.snapshot());
        assertThat(q[0].idle()).isTrue();
    }

    @Test
    void adaptiveWakesNothingBeforeTheStartNorForAChangeThatAPeriodicFlushTook() {
        BatchQueue q = queue(QueueConfig.DEFAULTS);
        event(q, new ClusterEvent.PolicyUpserted(webPolicy("p", 80)));
        assertThat(scheduler.requested()).as("the first whole state goes by flushNow, then start").isZero();
        q.flushNow();
        q.start();
        event(q, new ClusterEvent.PolicyUpserted(webPolicy("q", 81)));
        scheduler.tick(); // the backstop flush runs first and takes it
        scheduler.runRequested(); // the wake-up finds nothing to do

        assertThat(backend.batches()).hasSize(4);
        assertThat(backend.state()).isEqualTo(compiler.snapshot());
    }

    @Test
    void backgroundCoalescesUntilTheIntervalAndTheLatestVersionWins() {
        BatchQueue q = queue(QueueConfig.FIXED_INTERVAL);
        q.start();
        assertThat(scheduler.period()).isEqualTo(Duration.ofMillis(500));
        event(q, new ClusterEvent.PolicyUpserted(webPolicy("p", 80)));
        event(q, new ClusterEvent.PolicyUpserted(webPolicy("p", 81)));
        event(q, new ClusterEvent.PolicyUpserted(webPolicy("p", 82)));
        assertThat(backend.batches()).hasSize(2);

        scheduler.tick();

        assertThat(backend.batches()).hasSize(3);
        Batch last = backend.lastBatch();
        assertThat(last.delta().policies()).hasSize(1);
        assertThat(last.delta().policies().get(new PolicyKey("x", "p")).before()).isNull();
        assertThat(backend.state()).isEqualTo(compiler.snapshot());
    }

    @Test
    void netPolInBackgroundFlipsAtRunTime() {
        BatchQueue q = queue(QueueConfig.FIXED_INTERVAL);
        q.start();
        event(q, new ClusterEvent.PolicyUpserted(webPolicy("p", 80)));
        event(q, new ClusterEvent.PolicyUpserted(webPolicy("q", 81)));
        assertThat(backend.batches()).as("waiting for the interval").hasSize(2);

        q.reconfigure(QueueConfig.FOREGROUND);
        scheduler.runRequested();
        assertThat(backend.batches()).as("what waited goes at once").hasSize(3);
        event(q, new ClusterEvent.PolicyUpserted(webPolicy("r", 82)));
        assertThat(backend.batches()).as("then each event is its own transaction").hasSize(4);
        assertThat(scheduler.period()).as("refused parts are still retried").isEqualTo(RETRY.initial());

        q.reconfigure(new QueueConfig(true, false, 100, Duration.ofSeconds(2)));
        event(q, new ClusterEvent.PolicyUpserted(webPolicy("s", 83)));
        event(q, new ClusterEvent.PolicyUpserted(webPolicy("t", 84)));
        assertThat(backend.batches()).as("background again").hasSize(4);
        assertThat(scheduler.period()).as("the new interval replaced the old period").isEqualTo(Duration.ofSeconds(2));
        scheduler.tick();
        assertThat(backend.batches()).hasSize(5);
        assertThat(backend.state()).isEqualTo(compiler.snapshot());

        event(q, new ClusterEvent.PolicyUpserted(webPolicy("u", 85)));
        assertThat(scheduler.requested()).isZero();
        q.reconfigure(new QueueConfig(true, true, 100, Duration.ofSeconds(2)));
        scheduler.runRequested();
        assertThat(backend.batches()).as("turning adaptive on sends what waited").hasSize(6);
        event(q, new ClusterEvent.PolicyUpserted(webPolicy("v", 86)));
        scheduler.runRequested();
        assertThat(backend.batches()).as("and then each change without the timer").hasSize(7);
        assertThat(backend.state()).isEqualTo(compiler.snapshot());
    }

    @Test
    void anAddFollowedByADeleteOfANeverAppliedPolicyCancelsOut() {
        BatchQueue q = queue(QueueConfig.DEFAULTS);
        event(q, new ClusterEvent.PolicyUpserted(webPolicy("p", 80)));
        event(q, new ClusterEvent.PolicyDeleted(new PolicyKey("x", "p")));
        assertThat(q.idle()).isFalse();

        FlushResult result = q.flushNow();

        assertThat(result.changes()).isZero();
        assertThat(backend.batches()).hasSize(2);
        assertThat(q.idle()).isTrue();
    }

    @Test
    void reachingMaxPendingNetPolsFlushesWithoutWaitingForTheInterval() {
        BatchQueue q = queue(new QueueConfig(true, false, 10, Duration.ofMinutes(1)));
        q.start();
        for (int i = 0; i < 9; i++) {
            event(q, new ClusterEvent.PolicyUpserted(webPolicy("p" + i, 80)));
        }
        assertThat(scheduler.requested()).isZero();
        event(q, new ClusterEvent.PolicyUpserted(webPolicy("p9", 80)));
        assertThat(scheduler.requested()).isEqualTo(1);

        scheduler.runRequested();

        assertThat(backend.lastBatch().policyChanges()).isEqualTo(10);
        assertThat(q.pendingPolicies()).isZero();
    }

    @Test
    void oneRefusedPolicyAmongAHundredIsIsolatedReportedAndRetriedWithBackoff() {
        PolicyKey bad = new PolicyKey("x", "p37");
        backend.rejectWhen(unit -> unit.equals(new Batch.UnitKey.Policy(bad)));
        BatchQueue q = queue(QueueConfig.DEFAULTS);
        for (int i = 0; i < 100; i++) {
            event(q, new ClusterEvent.PolicyUpserted(webPolicy("p" + i, 80 + i)));
        }

        FlushResult first = q.flushNow();

        assertThat(first.oneTransaction()).isFalse();
        assertThat(first.failures()).singleElement().satisfies(f -> {
            assertThat(f.unit()).isEqualTo(new Batch.UnitKey.Policy(bad));
            assertThat(f.error()).contains("refused NetworkPolicy x/p37");
            assertThat(f.attempts()).isEqualTo(1);
        });
        assertThat(backend.state().policies()).hasSize(99).doesNotContainKey(bad);
        assertThat(backend.state().pods().get(io.npmagent.dataplane.model.PodKey.parse("x/web")).ingressPolicies())
                .as("the pod row lands and lists p37, which the backend renders fail-closed until it lands")
                .contains(bad);
        assertThat(q.failures()).hasSize(1);
        assertThat(failuresMetric()).isEqualTo(1.0);
        assertThat(failingParts()).as("refused now, per kind (the alert's input)")
                .containsExactlyInAnyOrderEntriesOf(Map.of("addresses", 0.0, "peerset", 0.0, "policy", 1.0, "clusterpolicy", 0.0, "pod", 0.0));

        clock.advance(Duration.ofMillis(500));
        assertThat(q.flushNow().changes()).as("not before its retry delay").isZero();
        clock.advance(Duration.ofMillis(600));
        FlushResult second = q.flushNow();
        assertThat(second.failures()).singleElement().satisfies(f -> assertThat(f.attempts()).isEqualTo(2));
        assertThat(second.failures().get(0).retryAt()).isEqualTo(clock.instant().plusSeconds(2));
        assertThat(failuresMetric()).as("every refusal counts").isEqualTo(2.0);
        assertThat(failingParts()).as("one part refused twice is still one part").containsEntry("policy", 1.0);

        backend.rejectWhen(unit -> false);
        clock.advance(Duration.ofSeconds(2));
        assertThat(q.flushNow().landed()).isTrue();
        assertThat(q.failures()).isEmpty();
        assertThat(failingParts()).as("landed: nothing is refused now").containsEntry("policy", 0.0);
        assertThat(backend.state()).isEqualTo(compiler.snapshot());
        assertThat(q.idle()).isTrue();
    }

    /** What the kernel was given and refused is in the log at WARN, bounded, once per failure: not at every retry. */
    @Test
    void theRefusedInputIsLoggedOncePerFailureAndBounded() {
        java.util.List<java.util.logging.LogRecord> logged = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.logging.Handler handler = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord r) {
                if (r.getLevel() == java.util.logging.Level.WARNING && r.getMessage().contains("the input refused")) {
                    logged.add(r);
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        java.util.logging.Logger log = java.util.logging.Logger.getLogger(BatchQueue.class.getName());
        log.addHandler(handler);
        try {
            PolicyKey bad = new PolicyKey("x", "big");
            String input = "-A NPM-X " + "y".repeat(BatchQueue.MAX_LOGGED_INPUT * 2);
            Backend refusing = new InterceptingBackend(backend, b -> {
                if (b.delta().policies().containsKey(bad)) {
                    throw new io.npmagent.dataplane.backend.BackendException("iptables-restore: line 1 failed", input);
                }
            });
            BatchQueue q = new BatchQueue(refusing, QueueConfig.FOREGROUND, RETRY, clock, scheduler, metrics);
            event(q, new ClusterEvent.PolicyUpserted(policy("x", "big").select(match("app", "web")).build()));
            q.flushNow();
            clock.advance(Duration.ofSeconds(2));
            q.flushNow();
            assertThat(q.failures()).singleElement().satisfies(f -> assertThat(f.attempts()).isEqualTo(2));
            assertThat(logged).as("one failure, two attempts: logged once").singleElement().satisfies(r -> {
                String text = java.text.MessageFormat.format(r.getMessage(), r.getParameters());
                assertThat(text).contains("NetworkPolicy x/big", "iptables-restore: line 1 failed", "-A NPM-X yyy",
                        "(" + (input.length() - BatchQueue.MAX_LOGGED_INPUT) + " more characters)");
                assertThat(text.length()).isLessThan(BatchQueue.MAX_LOGGED_INPUT + 300);
            });
        } finally {
            log.removeHandler(handler);
        }
    }

    /** A refused policy deleted before its retry is no longer failing: nothing of it is left to land. */
    @Test
    void aRefusedPolicyDeletedBeforeItsRetryStopsCountingAsFailing() {
        PolicyKey p = new PolicyKey("x", "p");
        BatchQueue q = queueWithPolicyRefused(p);
        assertThat(failingParts()).containsEntry("policy", 1.0);

        event(q, new ClusterEvent.PolicyDeleted(p));
        clock.advance(Duration.ofSeconds(1));
        q.flushNow();

        assertThat(q.failures()).isEmpty();
        assertThat(failingParts()).containsEntry("policy", 0.0);
    }

    @Test
    void aNewerVersionOfARefusedPolicyReplacesItOnTheRetry() {
        PolicyKey p = new PolicyKey("x", "p");
        BatchQueue q = queueWithPolicyRefused(p);
        event(q, new ClusterEvent.PolicyUpserted(webPolicy("p", 8080)));
        backend.rejectWhen(unit -> false);
        clock.advance(Duration.ofSeconds(1));

        q.flushNow();

        assertThat(backend.lastBatch().delta().policies().get(p).before()).as("never applied").isNull();
        assertThat(backend.state()).isEqualTo(compiler.snapshot());
    }

    @Test
    void aChangeArrivingWhileItsOlderVersionIsRefusedGoesOnTopOfIt() {
        PolicyKey p = new PolicyKey("x", "p");
        backend.rejectWhen(unit -> unit.equals(new Batch.UnitKey.Policy(p)));
        BatchQueue[] q = new BatchQueue[1];
        boolean[] raced = {false};
        // The model thread submits v2 while the flusher is inside the backend with v1.
        Backend racing = new InterceptingBackend(backend, batch -> {
            if (!raced[0] && batch.delta().policies().containsKey(p)) {
                raced[0] = true;
                event(q[0], new ClusterEvent.PolicyUpserted(webPolicy("p", 8080)));
            }
        });
        q[0] = new BatchQueue(racing, QueueConfig.DEFAULTS, RETRY, clock, scheduler, metrics);
        event(q[0], new ClusterEvent.PolicyUpserted(webPolicy("p", 80)));
        q[0].flushNow();
        assertThat(raced[0]).isTrue();

        backend.rejectWhen(unit -> false);
        clock.advance(Duration.ofSeconds(1));
        q[0].flushNow();

        assertThat(backend.lastBatch().delta().policies().get(p).before()).as("v1 never landed").isNull();
        assertThat(backend.state()).isEqualTo(compiler.snapshot());
    }

    @Test
    void theQueueIsNotIdleWhileABatchIsInTheBackend() {
        BatchQueue[] q = new BatchQueue[1];
        boolean[] idleInside = {true};
        q[0] = new BatchQueue(new InterceptingBackend(backend, batch -> idleInside[0] = q[0].idle()), QueueConfig.DEFAULTS, RETRY, clock,
                scheduler, metrics);
        event(q[0], new ClusterEvent.PolicyUpserted(webPolicy("p", 80)));
        q[0].flushNow();
        assertThat(idleInside[0]).as("taken out of the queue is not yet in the kernel").isFalse();
        assertThat(q[0].idle()).isTrue();
    }

    @Test
    void whateverABackendThrowsIsARefusalAndNothingIsLost() {
        boolean[] broken = {true};
        BatchQueue q = new BatchQueue(new InterceptingBackend(backend, batch -> {
            if (broken[0]) {
                throw new IllegalStateException("a bug in a backend");
            }
        }), QueueConfig.DEFAULTS, RETRY, clock, scheduler, metrics);
        event(q, new ClusterEvent.PolicyUpserted(webPolicy("p", 80)));
        FlushResult first = q.flushNow();
        assertThat(first.failures()).as("every part of the batch, tried alone").hasSize(3)
                .allSatisfy(f -> assertThat(f.error()).contains("a bug in a backend"));
        assertThat(q.idle()).isFalse();

        broken[0] = false;
        clock.advance(Duration.ofSeconds(1));
        assertThat(q.flushNow().landed()).isTrue();
        assertThat(backend.state()).isEqualTo(compiler.snapshot());
        assertThat(q.idle()).isTrue();
    }

    @Test
    void latenciesAreExportedInSeconds() throws IOException {
        BatchQueue q = queue(QueueConfig.DEFAULTS);
        event(q, new ClusterEvent.PolicyUpserted(webPolicy("p", 80)));
        clock.advance(Duration.ofMillis(1500));
        q.flushNow();

        String text = exposition();
        assertThat(text).contains("npm_policy_apply_delay_seconds_sum 1.5\n");
        assertThat(text).contains("npm_policy_apply_delay_seconds_bucket{le=\"2.5\"} 1\n");
        assertThat(text).contains("npm_policy_apply_delay_seconds_bucket{le=\"1.0\"} 0\n");
        assertThat(text).contains("npm_apply_latency_seconds_count{backend=\"fake\"} 1\n");
        assertThat(text).contains("npm_batch_size_sum 1.0\n");
        assertThat(text).contains("npm_pending_netpols 0.0\n");
        assertThat(text).contains("npm_num_policies 1.0\n");
    }

    /** A queue whose backend refuses policy {@code p}, after the flush that tried it once (port 80). */
    private BatchQueue queueWithPolicyRefused(PolicyKey p) {
        backend.rejectWhen(unit -> unit.equals(new Batch.UnitKey.Policy(p)));
        BatchQueue q = queue(QueueConfig.DEFAULTS);
        event(q, new ClusterEvent.PolicyUpserted(webPolicy(p.name(), 80)));
        q.flushNow();
        return q;
    }

    private double failuresMetric() {
        return metrics.applyFailures.labelValues("policy").get();
    }

    /** npm_apply_failing_parts, kind by kind, as the registry would write it. */
    private Map<String, Double> failingParts() {
        Map<String, Double> byKind = new HashMap<>();
        for (var point : metrics.applyFailingParts.collect().getDataPoints()) {
            byKind.put(point.getLabels().get("kind"), point.getValue());
        }
        return byKind;
    }

    private String exposition() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrometheusTextFormatWriter.create().write(out, registry.scrape());
        return out.toString(StandardCharsets.UTF_8);
    }
}
