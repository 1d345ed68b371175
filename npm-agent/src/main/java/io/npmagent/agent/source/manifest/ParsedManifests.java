package io.npmagent.agent.source.manifest;

import io.npmagent.dataplane.model.ClusterNetworkPolicy;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import java.util.List;
import java.util.TreeMap;

/**
 * What a manifest stream or directory held: the objects that loaded, in the order they were first
 * seen, and one line per problem (a document that did not load, a pod item that was skipped, a
 * duplicate). Objects load even when other objects, or parts of themselves, did not.
 */
public record ParsedManifests(
        List<Namespace> namespaces, List<Pod> pods, List<NetworkPolicy> policies, List<ClusterNetworkPolicy> clusterPolicies,
        List<String> errors) {

    public ParsedManifests {
        namespaces = List.copyOf(namespaces);
        pods = List.copyOf(pods);
        policies = List.copyOf(policies);
        clusterPolicies = List.copyOf(clusterPolicies);
        errors = List.copyOf(errors);
    }

    /** The objects as a cluster snapshot; were one key listed twice, the later object would win. */
    public ClusterState toClusterState() {
        TreeMap<String, Namespace> ns = new TreeMap<>();
        namespaces.forEach(n -> ns.put(n.name(), n));
        TreeMap<PodKey, Pod> p = new TreeMap<>();
        pods.forEach(pod -> p.put(pod.key(), pod));
        TreeMap<PolicyKey, NetworkPolicy> pol = new TreeMap<>();
        policies.forEach(policy -> pol.put(policy.key(), policy));
        TreeMap<String, ClusterNetworkPolicy> cnp = new TreeMap<>();
        clusterPolicies.forEach(policy -> cnp.put(policy.name(), policy));
        return new ClusterState(ns, p, pol, cnp, new TreeMap<>());
    }
}
