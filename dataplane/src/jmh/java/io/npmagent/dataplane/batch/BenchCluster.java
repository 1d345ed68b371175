package io.npmagent.dataplane.batch;

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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The benchmarks' cluster: namespaces of 100 pods (labels app=a0..a9), one policy per namespace
 * admitting ingress from app=a(i) pods of every namespace, 100 pods on this node ("node-1"); and one
 * more remote pod of an existing identity, which comes and goes.
 */
final class BenchCluster {
    static final int PODS_PER_NAMESPACE = 100;
    static final int LOCAL_PODS = 100;

    final PolicyCompiler compiler = new PolicyCompiler("node-1");
    /** Each event's delta as the compiler gave it, in order: the whole cluster from nothing. */
    final List<DesiredDelta> built = new ArrayList<>();
    final ClusterEvent add;
    final ClusterEvent delete;

    BenchCluster(int pods) {
        int namespaces = Math.max(1, pods / PODS_PER_NAMESPACE);
        for (int n = 0; n < namespaces; n++) {
            built.add(compiler.apply(new ClusterEvent.NamespaceUpserted(new Namespace("ns-" + n, Map.of("team", "t" + n % 10)))).delta());
            NetworkPolicy.Peer peer = new NetworkPolicy.Peer(new LabelSelector(Map.of("app", "a" + n % 10), List.of()),
                    new LabelSelector(Map.of(), List.of()), null);
            built.add(compiler.apply(new ClusterEvent.PolicyUpserted(new NetworkPolicy("ns-" + n, "allow", new LabelSelector(Map.of(), List.of()),
                    List.of("Ingress"), List.of(new NetworkPolicy.Rule(List.of(peer), List.of())), List.of()))).delta());
        }
        for (int i = 0; i < pods; i++) {
            built.add(compiler.apply(new ClusterEvent.PodUpserted(pod(i / PODS_PER_NAMESPACE, i, i < LOCAL_PODS ? "node-1" : "node-2"))).delta());
        }
        Pod extra = pod(namespaces - 1, pods + 1, "node-2");
        add = new ClusterEvent.PodUpserted(extra);
        delete = new ClusterEvent.PodDeleted(new PodKey(extra.namespace(), extra.name()));
    }

    private static Pod pod(int namespace, int i, String node) {
        return new Pod("ns-" + namespace, "p" + i, Map.of("app", "a" + i % 10), List.of(IpAddress.v4(0x0a000000 | (i + 1))), node, false,
                PodPhase.RUNNING, List.of(), Map.of());
    }
}
