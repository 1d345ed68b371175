package io.npmagent.bpf;

import io.npmagent.bpf.maps.EndpointMap;
import io.npmagent.bpf.model.Rendered;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which local pod is behind which interface, and what that makes the maps want: the pod's endpoint under
 * its interface ({@code npm_endpoints}) and each of its addresses leading to it ({@code npm_local}). Pods
 * whose interface was not found are not enforced by us yet and are looked for again at the next batch.
 */
final class LocalPods {
    private final Map<Integer, PodKey> podOfInterface = new HashMap<>();
    private final Map<PodKey, Integer> interfaceOfPod = new HashMap<>();
    private final Map<PodKey, List<IpAddress>> addressesOfPod = new HashMap<>();
    private final Set<PodKey> unplaced = new HashSet<>();

    /**
     * Places each of {@code candidates} where {@code found} says (a local pod of {@code endpoints} that
     * is not found is unplaced; a pod no longer local is forgotten), setting what that changes in
     * {@code maps}. Returns the interfaces whose pod changed.
     */
    Set<Integer> place(Set<PodKey> candidates, Map<PodKey, Rendered.Endpoint> endpoints, Map<PodKey, Integer> found, VersionedMaps maps) {
        Set<Integer> touched = new HashSet<>();
        for (PodKey pod : candidates) { // first every old place, so an interface a pod leaves can take another
            Integer old = interfaceOfPod.remove(pod);
            if (old != null) {
                podOfInterface.remove(old);
                maps.removeEndpoint(old);
                touched.add(old);
                for (IpAddress a : addressesOfPod.remove(pod)) {
                    maps.removeLocal(a, old);
                }
            }
        }
        for (PodKey pod : candidates) {
            Rendered.Endpoint ep = endpoints.get(pod);
            Integer ifindex = found.get(pod);
            unplaced.remove(pod);
            if (ep != null && ifindex == null) {
                unplaced.add(pod);
            } else if (ep != null) {
                interfaceOfPod.put(pod, ifindex);
                podOfInterface.put(ifindex, pod);
                maps.putEndpoint(ifindex, new EndpointMap.Value(ep.id(), ep.ingress(), ep.egress(),
                        ep.bandwidth().ingressBitsPerSecond(), ep.bandwidth().egressBitsPerSecond(), ep.congestion(), ep.tiers(),
                        ep.isolation()));
                touched.add(ifindex);
                addressesOfPod.put(pod, ep.ips());
                for (IpAddress a : ep.ips()) {
                    maps.putLocal(a, ifindex);
                }
            }
        }
        return touched;
    }

    /** Placed pods by interface. */
    Map<Integer, PodKey> byInterface() {
        return podOfInterface;
    }

    Set<PodKey> placed() {
        return interfaceOfPod.keySet();
    }

    /** Local pods whose interface was not found (or refused our programs): live, so an attach failure can add to it. */
    Set<PodKey> unplaced() {
        return unplaced;
    }
}
