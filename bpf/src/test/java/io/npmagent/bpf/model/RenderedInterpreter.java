package io.npmagent.bpf.model;

import io.npmagent.bpf.maps.EndpointMap;
import io.npmagent.bpf.maps.IpcacheMap;
import io.npmagent.bpf.maps.PolicyMap;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.IpAddress;

/**
 * Reads rendered map contents the way tc_pod.c and policy.h do, for one new connection: the endpoint of
 * the local pod at each end, the peer's class and atom by longest prefix; then the pod side's Admin tier
 * table, its NetworkPolicy entries where they isolate it (a miss drops), its Baseline table, allow. Each
 * lookup takes the longest entry for the class, else its atom (if any), else ANY, covering the protocol
 * and port; for the node's own addresses, a table's entries for the node identity alone, and
 * NetworkPolicy admits them. Written from the C code, apart from the model and the evaluator.
 */
final class RenderedInterpreter {
    private final Rendered maps;

    RenderedInterpreter(Rendered maps) {
        this.maps = maps;
    }

    boolean allowed(IpAddress src, IpAddress dst, int protocol, int port) {
        return side(src, dst, 1, protocol, port) && side(dst, src, 0, protocol, port);
    }

    /** One program's verdict: at {@code self}'s interface, about {@code peer}. */
    boolean side(IpAddress self, IpAddress peer, int direction, int protocol, int port) {
        return PolicyMap.verdictOf(judge(self, peer, direction, protocol, port)) == PolicyMap.ALLOW;
    }

    /** What npm_judge gives: ALLOW or DENY, with the number of what decided ({@link PolicyMap#packed}). */
    int judge(IpAddress self, IpAddress peer, int direction, int protocol, int port) {
        Rendered.Endpoint ep = maps.endpoints().values().stream().filter(e -> e.ips().contains(self)).findFirst().orElse(null);
        if (ep == null) {
            return PolicyMap.ALLOW;
        }
        EndpointMap.Judged judged = ep.judged(direction);
        if (judged == EndpointMap.Judged.OPEN) {
            return PolicyMap.ALLOW;
        }
        IpcacheMap.Value identity = identity(peer);
        if (identity.identity() == BpfModel.HOST) {
            return PolicyMap.ALLOW;
        }
        boolean node = identity.identity() >= BpfModel.NODE_BASE && identity.identity() < 0x20000000;
        int v = tier(ep.tiers().admin(direction), direction, identity, !node, protocol, port);
        if (PolicyMap.verdictOf(v) != PolicyMap.NEXT) {
            return fin(v);
        }
        if (judged != EndpointMap.Judged.MISS_ALLOWED) {
            if (node) {
                return PolicyMap.ALLOW;
            }
            Integer own = lookup(ep.id(), direction, identity, true, protocol, port);
            return own != null && PolicyMap.verdictOf(own) == PolicyMap.ALLOW ? own
                    : PolicyMap.packed(PolicyMap.DENY, ep.isolation().of(direction));
        }
        v = tier(ep.tiers().baseline(direction), direction, identity, !node, protocol, port);
        return PolicyMap.verdictOf(v) == PolicyMap.NEXT ? PolicyMap.ALLOW : fin(v);
    }

    /** npm_final: ALLOW as it is, anything else a DENY keeping its number. */
    private static int fin(int v) {
        return PolicyMap.verdictOf(v) == PolicyMap.ALLOW ? v : PolicyMap.packed(PolicyMap.DENY, PolicyMap.refOf(v));
    }

    private int tier(int table, int direction, IpcacheMap.Value identity, boolean any, int protocol, int port) {
        Integer v = table == 0 ? null : lookup(table, direction, identity, any, protocol, port);
        return v == null ? PolicyMap.NEXT : v;
    }

    /** An owner's verdict for the peer: its class, else its atom, else ANY (if {@code any}); null on a miss. */
    private Integer lookup(int owner, int direction, IpcacheMap.Value identity, boolean any, int protocol, int port) {
        Integer verdict = lookup(owner, direction, identity.identity(), protocol, port);
        if (verdict == null && identity.atom() != IpcacheMap.NO_ATOM) {
            verdict = lookup(owner, direction, identity.atom(), protocol, port);
        }
        if (verdict == null && any) {
            verdict = lookup(owner, direction, BpfModel.ANY, protocol, port);
        }
        return verdict;
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
