package io.npmagent.bpf.model;

import io.npmagent.bpf.maps.EndpointMap;
import io.npmagent.bpf.maps.EndpointMap.Judged;
import io.npmagent.bpf.maps.IpcacheMap;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.bandwidth.BandwidthLimits;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The maps' contents as the desired state wants them, in no copy of the state in particular:
 * the ipcache (prefix to peer class and the atom a policy lookup falls back to) and over it the node's own
 * addresses (each to HOST or its atom's node identity, whatever else holds it), the local endpoints (by pod:
 * id, addresses, how each direction is judged, its tier tables), and the policy entries of endpoints
 * and tier tables with their verdicts ({@code PolicyMap.ALLOW}, {@code DENY} or {@code NEXT}).
 */
public record Rendered(Map<Cidr, IpcacheMap.Value> ipcache, Map<Cidr, Integer> node, Map<PodKey, Endpoint> endpoints,
                       Map<PolicyEntry, Integer> policy, Changes changes) {

    /**
     * A local pod as the programs see it once its interface is known: per direction whether it is judged
     * and what a peer its entries do not cover gets, its tier tables, and the numbers its default denies carry; {@code congestion} null: the default.
     */
    public record Endpoint(int id, List<IpAddress> ips, Judged ingress, Judged egress, BandwidthLimits bandwidth,
                           String congestion, EndpointMap.Tiers tiers, EndpointMap.Isolation isolation) {
        public Judged judged(int direction) {
            return direction == 0 ? ingress : egress;
        }
    }

    /**
     * What differs from the render before: everything ({@code all}), or the endpoints of {@code pods},
     * the policy entries in {@code policy} (each one gone, new or with another verdict) and the ipcache prefixes in
     * {@code ipcache} (each one gone, new or mapped to another class or atom).
     */
    public record Changes(boolean all, Set<PodKey> pods, Set<PolicyEntry> policy, Set<Cidr> ipcache) {
        public static final Changes ALL = new Changes(true, Set.of(), Set.of(), Set.of());
    }
}
