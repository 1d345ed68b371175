package io.npmagent.dataplane.batch;

import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.desired.DesiredDelta;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The dataplane's hot paths at cluster sizes ({@link BenchCluster}): compiling one pod's coming and
 * going, the queue coalescing them while the whole cluster's first sync is still pending, and
 * {@link Batch#units} splitting a batch, of one pod and of the whole cluster (the first sync after a
 * start: linear in the cluster by nature, the baseline the others are read against).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class DataplaneBenchmark {
    @Param({"1000", "10000", "100000"})
    public int pods;

    private BenchCluster cluster;
    private DesiredDelta add;
    private DesiredDelta delete;
    private PendingChanges pending;
    private Batch whole;
    private Batch onePod;

    @Setup(Level.Trial)
    public void cluster() {
        cluster = new BenchCluster(pods);
        add = cluster.compiler.apply(cluster.add).delta();
        delete = cluster.compiler.apply(cluster.delete).delta();
        pending = new PendingChanges();
        cluster.built.forEach(pending::addNewer);
        whole = new Batch(pending.takeDue(unit -> true));
        cluster.built.forEach(pending::addNewer);
        onePod = new Batch(add);
    }

    /** The compiler takes a pod's creation, then its deletion (two events, two deltas). */
    @Benchmark
    public void compilePodAddAndDelete(Blackhole bh) {
        bh.consume(cluster.compiler.apply(cluster.add));
        bh.consume(cluster.compiler.apply(cluster.delete));
    }

    /** The queue takes both deltas while the cluster's first sync is pending: they cancel out. */
    @Benchmark
    public void queueCoalescesPodAddAndDelete() {
        pending.addNewer(add);
        pending.addNewer(delete);
    }

    @Benchmark
    public void unitsOfOnePod(Blackhole bh) {
        bh.consume(onePod.units());
    }

    @Benchmark
    public void unitsOfTheWholeCluster(Blackhole bh) {
        bh.consume(whole.units());
    }
}
