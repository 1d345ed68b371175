package io.npmagent.iptables.model;

import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.desired.PortMatch;

/**
 * A kernel address set in one family: the addresses of a selector peer set's members, an ipBlock's
 * prefixes, or the (address, protocol, port) of every pod serving a named port.
 */
public sealed interface SetId {
    Family family();

    /** The definition hashed into the set's name. */
    String canonical();

    record Selector(PeerSetKey.SelectorPeers key, Family family) implements SetId {
        @Override
        public String canonical() {
            return key.canonical();
        }
    }

    record Cidr(PeerSetKey.CidrPeers key, Family family) implements SetId {
        @Override
        public String canonical() {
            return key.canonical();
        }
    }

    record NamedPort(PortMatch.NamedPort port, Family family) implements SetId {
        @Override
        public String canonical() {
            return "namedport:" + port.protocol() + ":" + port.name();
        }
    }
}
