package io.npmagent.dataplane.batch;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.backend.FakeBackend;
import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.policy.ClusterPolicyArbitraries;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The queue never loses or reorders a change, whatever the interleaving: random events, flushes at
 * random points, and a backend that refuses random objects for a while. The fake backend checks every
 * batch's {@code before} values against what it holds (so coalescing and put-backs stay exact) and
 * refuses rules naming missing sets; once refusals stop and retries are due, it holds exactly the
 * compiler's state.
 */
class BatchQueuePropertyTest {

    record Step(ClusterEvent event, boolean flushAfter) {}

    @Provide
    Arbitrary<List<Step>> steps() {
        return ClusterPolicyArbitraries.eventOfBothKinds()
                .flatMap(e -> Arbitraries.integers().between(0, 3).map(i -> new Step(e, i == 0)))
                .list().ofMinSize(1).ofMaxSize(40);
    }

    @Provide
    Arbitrary<Set<String>> refused() {
        return Arbitraries.of("pol0", "pol1", "pol2", "cnp0", "cnp2", "p0", "p3", "set", "addresses").set().ofMaxSize(3);
    }

    @Provide
    Arbitrary<QueueConfig> modes() {
        QueueConfig adaptive = new QueueConfig(true, true, 5, Duration.ofMillis(500));
        return Arbitraries.of(QueueConfig.FOREGROUND, adaptive, adaptive.withAdaptive(false));
    }

    @Property(tries = 300)
    void everythingLandsOnceRefusalsStop(
            @ForAll("steps") List<Step> steps, @ForAll("refused") Set<String> refused, @ForAll("modes") QueueConfig mode) {
        PolicyCompiler compiler = new PolicyCompiler(null);
        FakeBackend backend = new FakeBackend().rejectWhen(unit -> refused.contains(nameOf(unit)));
        MutableClock clock = new MutableClock();
        ManualScheduler scheduler = new ManualScheduler();
        BatchQueue queue = new BatchQueue(backend, mode, new RetryPolicy(Duration.ofSeconds(1), Duration.ofSeconds(4)),
                clock, scheduler, new Metrics(new PrometheusRegistry()));
        queue.start();
        for (Step step : steps) {
            DesiredDelta delta = compiler.apply(step.event()).delta();
            queue.submit(delta);
            scheduler.runRequested();
            clock.advance(Duration.ofMillis(700));
            if (step.flushAfter()) {
                queue.flushNow();
            }
        }

        backend.rejectWhen(unit -> false);
        clock.advance(Duration.ofSeconds(5));
        queue.flushNow();

        assertThat(queue.failures()).isEmpty();
        assertThat(queue.idle()).isTrue();
        assertThat(backend.state()).isEqualTo(compiler.snapshot());
    }

    private static String nameOf(Batch.UnitKey unit) {
        if (unit instanceof Batch.UnitKey.Policy p) {
            return p.policy().name();
        }
        if (unit instanceof Batch.UnitKey.ClusterPolicy p) {
            return p.name();
        }
        if (unit instanceof Batch.UnitKey.Pod p) {
            return p.pod().name();
        }
        if (unit instanceof Batch.UnitKey.PeerSet) {
            return "set";
        }
        return "addresses";
    }
}
