package io.npmagent.harness.sandbox;

import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The sandbox's CNI: a pod whose manifest has no {@code status.podIP} gets an IPv4 address from
 * 10.250.0.0/16 and an IPv6 address from fd50::/64 (the same host number in both), as if the CNI had
 * assigned them and the API server had shown them in the pod's status. A pod keeps its addresses while
 * it exists; addresses that manifests name are never handed out.
 */
final class AddressAssigner {
    private final Map<PodKey, Integer> assigned = new HashMap<>();

    ClusterState assign(ClusterState state) {
        Set<IpAddress> declared = new HashSet<>();
        state.pods().values().forEach(p -> declared.addAll(p.ips()));
        assigned.keySet().retainAll(state.pods().keySet());
        TreeMap<PodKey, Pod> pods = new TreeMap<>(state.pods());
        for (Pod pod : state.pods().values()) {
            if (!pod.ips().isEmpty() || pod.hostNetwork() || pod.phase().terminal()) {
                assigned.remove(pod.key());
                continue;
            }
            Integer host = assigned.get(pod.key());
            if (host == null) {
                host = free(declared);
                assigned.put(pod.key(), host);
            }
            pods.put(pod.key(), pod.toBuilder().ips(addresses(host)).build());
        }
        return new ClusterState(state.namespaces(), pods, state.policies());
    }

    /** The addresses of a pod on the sandbox's node that has none declared: kept while it lives, never one in {@code taken}. */
    List<IpAddress> forPod(PodKey key, Set<IpAddress> taken) {
        Integer host = assigned.get(key);
        if (host == null) {
            host = free(taken);
            assigned.put(key, host);
        }
        return addresses(host);
    }

    /** Forgets the pods that are gone, so their addresses can be given again. */
    void retain(Set<PodKey> live) {
        assigned.keySet().retainAll(live);
    }

    private int free(Set<IpAddress> declared) {
        Set<Integer> used = new HashSet<>(assigned.values());
        for (int host = 1; host < 65535; host++) {
            if (!used.contains(host) && addresses(host).stream().noneMatch(declared::contains)) {
                return host;
            }
        }
        throw new IllegalStateException("the sandbox has no address left to give");
    }

    static List<IpAddress> addresses(int host) {
        List<IpAddress> out = new ArrayList<>();
        out.add(IpAddress.v4(0x0afa0000 | host));
        out.add(IpAddress.v6(0xfd50000000000000L, host));
        return out;
    }
}
