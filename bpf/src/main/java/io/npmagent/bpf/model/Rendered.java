package io.npmagent.bpf.model;

import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.bandwidth.BandwidthLimits;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The maps' contents as the desired state wants them, in no copy of the state in particular:
 * the ipcache (prefix to peer identity), the local endpoints (by pod: id, addresses, isolation), and
 * the policy entries.
 */
public record Rendered(Map<Cidr, Integer> ipcache, Map<PodKey, Endpoint> endpoints, Set<PolicyEntry> policy, Changes changes) {

    /** A local pod as the programs see it once its interface is known; {@code congestion} null: the default. */
    public record Endpoint(int id, List<IpAddress> ips, boolean ingressIsolated, boolean egressIsolated, BandwidthLimits bandwidth,
                           String congestion) {}

    /**
     * What differs from the render before: everything ({@code all}), or the endpoints of {@code pods},
     * the policy entries in {@code policy} (each one either gone or new) and the ipcache prefixes in
     * {@code ipcache} (each one gone, new or mapped to another identity).
     */
    public record Changes(boolean all, Set<PodKey> pods, Set<PolicyEntry> policy, Set<Cidr> ipcache) {
        public static final Changes ALL = new Changes(true, Set.of(), Set.of(), Set.of());
    }
}
