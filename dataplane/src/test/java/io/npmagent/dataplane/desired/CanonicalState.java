package io.npmagent.dataplane.desired;

import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A {@link DesiredState} with every identity number replaced by the identity it stands for. Numbers
 * depend on the order events arrived in; everything else must not, so two compilations of the same
 * cluster are compared in this form.
 */
public record CanonicalState(
        Set<Identity> identities,
        Map<IpAddress, Identity> addresses,
        Map<PeerSetKey, Set<Identity>> peerSets,
        Map<PolicyKey, CompiledPolicy> policies,
        Map<String, CompiledClusterPolicy> clusterPolicies,
        Map<PodKey, Pod> pods) {

    /** A local pod with its identity spelled out. */
    public record Pod(List<IpAddress> ips, Identity identity, List<PolicyKey> ingress, List<PolicyKey> egress, TierPolicies tiers) {}

    public static CanonicalState of(DesiredState state) {
        Map<IdentityId, Identity> ids = state.identities();
        Map<IpAddress, Identity> addresses = new HashMap<>();
        state.addresses().forEach((ip, id) -> addresses.put(ip, ids.get(id)));
        Map<PeerSetKey, Set<Identity>> sets = new HashMap<>();
        state.peerSets().forEach((key, members) -> {
            Set<Identity> s = new HashSet<>();
            members.forEach(id -> s.add(ids.get(id)));
            sets.put(key, s);
        });
        Map<PodKey, Pod> pods = new HashMap<>();
        state.pods().forEach((key, pod) -> pods.put(key,
                new Pod(pod.ips(), ids.get(pod.identity()), pod.ingressPolicies(), pod.egressPolicies(), pod.tiers())));
        return new CanonicalState(new HashSet<>(ids.values()), addresses, sets, state.policies(), state.clusterPolicies(), pods);
    }
}
