package io.npmagent.dataplane.flow;

import io.npmagent.dataplane.model.PodKey;
import java.time.Instant;

/**
 * Which flows a reader asks for; null fields match everything. {@code pod} and {@code namespace} match
 * either end; {@code policy} matches a name the attribution gives (NetworkPolicy {@code ns/name} or name,
 * ClusterNetworkPolicy name); {@code since} keeps flows whose latest packet is at or after it.
 */
public record FlowFilter(FlowVerdict verdict, PodKey pod, String namespace, String policy, Instant since) {
    public static final FlowFilter ALL = new FlowFilter(null, null, null, null, null);

    public boolean test(FlowRecord f) {
        if (verdict != null && f.verdict() != verdict) {
            return false;
        }
        if (pod != null && !pod.equals(f.source().pod()) && !pod.equals(f.destination().pod())) {
            return false;
        }
        if (namespace != null && !inNamespace(f.source()) && !inNamespace(f.destination())) {
            return false;
        }
        if (since != null && f.last().isBefore(since)) {
            return false;
        }
        return policy == null || (f.attribution() != null && f.attribution().named().stream()
                .anyMatch(s -> policy.equals(s.get(1)) || policy.equals(s.get(0) + "/" + s.get(1))));
    }

    private boolean inNamespace(FlowRecord.Peer p) {
        return p.pod() != null && p.pod().namespace().equals(namespace);
    }
}
