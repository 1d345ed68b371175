package io.npmagent.iptables.model;

import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Protocol;

/** One entry of a kernel address set; renderers spell it for ipset or nft. */
public sealed interface Member {

    /** A pod address in a selector set. */
    record Host(IpAddress ip) implements Member {}

    /** A prefix of an ipBlock; {@code excluded} for an except (ipset's {@code nomatch}). */
    record Net(Cidr cidr, boolean excluded) implements Member {}

    /** A pod address serving a named port: matched against the destination address and port. */
    record HostPort(IpAddress ip, Protocol protocol, int port) implements Member {}
}
