package io.npmagent.bpf.model;

import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.LabelSelector;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PodPhase;
import io.npmagent.dataplane.policy.PolicyCompiler;
import java.util.List;
import java.util.Map;
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
 * The eBPF render of one pod coming and going, at cluster sizes: what a batch of pod churn costs the
 * model. The cluster: namespaces of 100 pods (labels app=a0..a9), one policy per namespace admitting
 * ingress from app=a(i) pods of every namespace, 100 pods on this node. The pod that comes and goes is
 * a remote one (an address joins an existing peer class, or, for {@code newIdentity}, a class of its
 * own that every local pod's policy admits). {@code fromScratch} renders everything after each change,
 * which is what every address change cost before renders followed the change: the baseline.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class RenderBenchmark {
    private static final int PODS_PER_NAMESPACE = 100;
    private static final int LOCAL_PODS = 100;

    @Param({"1000", "10000", "100000"})
    public int pods;

    @Param({"false", "true"})
    public boolean newIdentity;

    private BpfModel model;
    private DesiredDelta add;
    private DesiredDelta delete;

    @Setup(Level.Trial)
    public void cluster() {
        PolicyCompiler compiler = new PolicyCompiler("node-1");
        model = new BpfModel();
        int namespaces = pods / PODS_PER_NAMESPACE;
        for (int n = 0; n < namespaces; n++) {
            model.apply(compiler.apply(new ClusterEvent.NamespaceUpserted(new Namespace("ns-" + n, Map.of("team", "t" + n % 10)))).delta());
            NetworkPolicy.Peer peer = new NetworkPolicy.Peer(new LabelSelector(Map.of("app", "a" + n % 10), List.of()),
                    new LabelSelector(Map.of(), List.of()), null);
            model.apply(compiler.apply(new ClusterEvent.PolicyUpserted(new NetworkPolicy("ns-" + n, "allow", new LabelSelector(Map.of(), List.of()),
                    List.of("Ingress"), List.of(new NetworkPolicy.Rule(List.of(peer), List.of())), List.of()))).delta());
        }
        for (int i = 0; i < pods; i++) {
            model.apply(compiler.apply(new ClusterEvent.PodUpserted(pod(i / PODS_PER_NAMESPACE, i, Map.of("app", "a" + i % 10),
                    i < LOCAL_PODS ? "node-1" : "node-2"))).delta());
        }
        model.render();
        Pod extra = pod(namespaces - 1, pods + 1, newIdentity ? Map.of("app", "a0", "new", "yes") : Map.of("app", "a0"), "node-2");
        add = compiler.apply(new ClusterEvent.PodUpserted(extra)).delta();
        delete = compiler.apply(new ClusterEvent.PodDeleted(new PodKey(extra.namespace(), extra.name()))).delta();
    }

    private static Pod pod(int namespace, int i, Map<String, String> labels, String node) {
        IpAddress ip = IpAddress.v4(0x0a000000 | (i + 1));
        return new Pod("ns-" + namespace, "p" + i, labels, List.of(ip), node, false, PodPhase.RUNNING, List.of(), Map.of());
    }

    /** One pod added and rendered, then deleted and rendered: two batches. */
    @Benchmark
    public void podAddAndDelete(Blackhole bh) {
        model.apply(add);
        bh.consume(model.render());
        model.apply(delete);
        bh.consume(model.render());
    }

    /** The same two changes, each followed by a render of everything. */
    @Benchmark
    public void podAddAndDeleteFromScratch(Blackhole bh) {
        model.apply(add);
        bh.consume(model.renderFromScratch());
        model.apply(delete);
        bh.consume(model.renderFromScratch());
    }
}
