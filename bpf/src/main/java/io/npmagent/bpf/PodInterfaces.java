package io.npmagent.bpf;

import io.npmagent.bpf.model.Rendered;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which interface each local pod is behind, kept between batches: the node's links and routes are read
 * (a few {@code ip} processes, costly on a node with many interfaces) only for pods not placed yet or
 * whose addresses changed, and for every pod at a rescan (the first batch, each reconcile), which also
 * catches a pod that came back on a new interface with its old address.
 */
final class PodInterfaces implements PodPlacer {
    private record Placed(List<IpAddress> ips, int ifindex) {}

    private final InterfaceResolver resolver;
    private final Map<PodKey, Placed> placed = new HashMap<>();
    private Set<IpAddress> nodeAddresses;
    private boolean scanned;

    PodInterfaces(InterfaceResolver resolver) {
        this.resolver = resolver;
    }

    /** As {@link PodPlacer#place}; pods without an interface are forgotten. */
    @Override
    public Map<PodKey, Integer> place(Map<PodKey, Rendered.Endpoint> endpoints, Set<PodKey> pods, boolean rescan) {
        List<PodKey> look = new ArrayList<>();
        for (PodKey pod : pods) {
            Rendered.Endpoint ep = endpoints.get(pod);
            Placed p = placed.get(pod);
            if (ep == null) {
                placed.remove(pod);
            } else if (rescan || !scanned || p == null || !p.ips().equals(ep.ips())) {
                look.add(pod);
            }
        }
        if (!look.isEmpty() || !scanned) {
            List<IpAddress> ips = new ArrayList<>();
            look.forEach(pod -> ips.addAll(endpoints.get(pod).ips()));
            Map<IpAddress, Integer> found = resolver.resolve(ips);
            nodeAddresses = resolver.nodeAddresses();
            for (PodKey pod : look) {
                List<IpAddress> podIps = endpoints.get(pod).ips();
                Integer ifindex = podIps.stream().map(found::get).filter(i -> i != null).findFirst().orElse(null);
                Placed before = placed.get(pod);
                if (ifindex == null && before != null && before.ips().equals(podIps) && resolver.existed(before.ifindex())) {
                    // Not found now, but its interface is still there: a bridge's forwarding entry aged out (a kernel
                    // without managed neighbours). Dropping the pod would stop enforcing it; it stays where it was.
                    continue;
                } else if (ifindex == null) {
                    placed.remove(pod);
                } else {
                    placed.put(pod, new Placed(podIps, ifindex));
                }
            }
            if (rescan || !scanned) {
                // Every pod looked at: neighbour entries we made for addresses no pod has any more go.
                Set<IpAddress> local = new HashSet<>();
                endpoints.values().forEach(ep -> local.addAll(ep.ips()));
                resolver.release(local);
            }
            scanned = true;
        }
        Map<PodKey, Integer> out = new HashMap<>();
        for (PodKey pod : pods) {
            Placed p = placed.get(pod);
            if (p != null) {
                out.put(pod, p.ifindex());
            }
        }
        return out;
    }

    /** As {@link PodPlacer#nodeAddresses}; looked up at the first call if no pod was placed yet. */
    @Override
    public Set<IpAddress> nodeAddresses() {
        if (nodeAddresses == null) {
            nodeAddresses = resolver.nodeAddresses();
        }
        return nodeAddresses;
    }
}
