package io.npmagent.bpf.model;

import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.IpAddress;

/**
 * Reads rendered map contents the way tc_pod.c does, for one new connection: the endpoint of the local
 * pod at each end, the peer's identity by longest prefix, and a policy entry for that identity or ANY
 * covering the protocol and port. Written from the C code, apart from the model and the evaluator.
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
    private boolean side(IpAddress self, IpAddress peer, int direction, int protocol, int port) {
        Rendered.Endpoint ep = maps.endpoints().values().stream().filter(e -> e.ips().contains(self)).findFirst().orElse(null);
        if (ep == null) {
            return true;
        }
        boolean isolated = direction == 0 ? ep.ingressIsolated() : ep.egressIsolated();
        if (!isolated) {
            return true;
        }
        int identity = identity(peer);
        for (PolicyEntry e : maps.policy()) {
            if (e.endpoint() == ep.id() && e.direction() == direction && (e.identity() == identity || e.identity() == BpfModel.ANY)
                    && e.covers(protocol, port)) {
                return true;
            }
        }
        return false;
    }

    private int identity(IpAddress ip) {
        Cidr best = null;
        for (Cidr prefix : maps.ipcache().keySet()) {
            if (prefix.contains(ip) && (best == null || prefix.prefixLength() > best.prefixLength())) {
                best = prefix;
            }
        }
        return best == null ? BpfModel.WORLD : maps.ipcache().get(best);
    }
}
