package io.npmagent.bpf.model;

import io.npmagent.bpf.maps.PolicyMap;

/**
 * One entry the policy map should hold, in no particular copy of the state: what an endpoint (its
 * NetworkPolicies) or a tier table ({@code endpoint} from {@code BpfModel.TABLE_BASE}) decides, in one
 * direction, about a peer identity, for every protocol or one protocol's ports under a prefix.
 */
public record PolicyEntry(int endpoint, int direction, int identity, boolean anyProtocol, int protocol, int port, int portBits) {

    public PolicyMap.Key key(int version) {
        return new PolicyMap.Key(version, direction, endpoint, identity, anyProtocol, protocol, port, portBits);
    }

    public static PolicyEntry of(PolicyMap.Key key) {
        return new PolicyEntry(key.endpoint(), key.direction(), key.identity(), key.anyProtocol(), key.protocol(), key.port(),
                key.portBits());
    }

    /** Whether a packet of {@code protocol} to {@code port} falls under this entry (its other fields matched). */
    public boolean covers(int packetProtocol, int packetPort) {
        if (anyProtocol) {
            return true;
        }
        return protocol == packetProtocol && (packetPort >>> (16 - portBits)) == (port >>> (16 - portBits));
    }
}
