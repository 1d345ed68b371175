package io.npmagent.iptables.model;

import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.IpAddress;

/** IPv4 or IPv6: iptables and ipset keep them apart (two tables, one family per set). */
public enum Family {
    IPV4,
    IPV6;

    public static Family of(IpAddress ip) {
        return ip.v6() ? IPV6 : IPV4;
    }

    public static Family of(Cidr cidr) {
        return cidr.v6() ? IPV6 : IPV4;
    }

    /** 4 or 6, for names. */
    public char digit() {
        return this == IPV4 ? '4' : '6';
    }
}
