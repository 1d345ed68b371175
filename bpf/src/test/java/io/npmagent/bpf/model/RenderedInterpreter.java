package io.npmagent.bpf.model;

import io.npmagent.bpf.maps.EndpointMap;
import io.npmagent.bpf.maps.IpcacheMap;
import io.npmagent.bpf.maps.PolicyMap;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.IpAddress;

/**
 * Reads rendered map contents the way tc_pod.c does, for one new connection: the endpoint of the local
 * pod at each end, the peer's class and atom by longest prefix, and the verdict of the longest policy
 * entry for that class, else for its atom (if any), else ANY, covering the protocol and port, else the
 * endpoint's verdict for a miss; for the node's own addresses, their own entries alone, admitted where
 * none covers the packet. Written from the C code, apart from the model and the evaluator.
 */
final class RenderedInterpreter {
    private final Rendered maps;

    RenderedInterpreter(Rendered maps) {
        this.maps = maps;
    }

    boolean allowed(IpAddress src, IpAddress dst, int protocol, int port) {
        return side(src, dst, 1, protocol, port) && side(dst, src, 0, protocol, port);
    }

    /**
     * One program's verdict: at {@code self}'s interface, about {@code peer}: the longest entry for the
     * peer's class, else for its atom, else for ANY, else the endpoint's verdict for a miss.
     */
    boolean side(IpAddress self, IpAddress peer, int direction, int protocol, int port) {
        Rendered.Endpoint ep = maps.endpoints().values().stream().filter(e -> e.ips().contains(self)).findFirst().orElse(null);
        if (ep == null) {
            return true;
        }
        EndpointMap.Judged judged = ep.judged(direction);
        if (judged == EndpointMap.Judged.OPEN) {
            return true;
        }
        IpcacheMap.Value identity = identity(peer);
        if (identity.identity() == BpfModel.HOST || (identity.identity() >= BpfModel.NODE_BASE && identity.identity() < 0x20000000)) {
            // the node: its own entries only, admitted where none covers the packet
            Integer own = lookup(ep.id(), direction, identity.identity(), protocol, port);
            return own == null || own == PolicyMap.ALLOW;
        }
        Integer verdict = lookup(ep.id(), direction, identity.identity(), protocol, port);
        if (verdict == null && identity.atom() != IpcacheMap.NO_ATOM) {
            verdict = lookup(ep.id(), direction, identity.atom(), protocol, port);
        }
        if (verdict == null) {
            verdict = lookup(ep.id(), direction, BpfModel.ANY, protocol, port);
        }
        if (verdict == null) {
            return judged == EndpointMap.Judged.MISS_ALLOWED;
        }
        return verdict == PolicyMap.ALLOW;
    }

    /** The verdict of the longest entry for the key, as the LPM trie finds it; null on a miss. */
    private Integer lookup(int endpoint, int direction, int identity, int protocol, int port) {
        PolicyEntry best = null;
        for (PolicyEntry e : maps.policy().keySet()) {
            if (e.endpoint() == endpoint && e.direction() == direction && e.identity() == identity && e.covers(protocol, port)
                    && (best == null || prefix(e) > prefix(best))) {
                best = e;
            }
        }
        return best == null ? null : maps.policy().get(best);
    }

    private static int prefix(PolicyEntry e) {
        return e.anyProtocol() ? PolicyMap.ANY_PROTOCOL : PolicyMap.ONE_PROTOCOL + e.portBits();
    }

    private IpcacheMap.Value identity(IpAddress ip) {
        Integer node = maps.node().get(Cidr.host(ip));
        if (node != null) {
            return IpcacheMap.Value.of(node); // written over whatever else holds the address
        }
        Cidr best = null;
        for (Cidr prefix : maps.ipcache().keySet()) {
            if (prefix.contains(ip) && (best == null || prefix.prefixLength() > best.prefixLength())) {
                best = prefix;
            }
        }
        return best == null ? IpcacheMap.Value.of(BpfModel.WORLD) : maps.ipcache().get(best);
    }
}
