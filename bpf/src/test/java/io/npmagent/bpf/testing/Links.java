package io.npmagent.bpf.testing;

import io.npmagent.harness.node.NetworkNamespace;
import io.npmagent.harness.node.PodLink;

/** Interfaces inside a test's namespace: a veth pair, and an interface's index as that namespace numbers it. */
public final class Links {
    private Links() {}

    /** Adds a veth pair {@code a}/{@code b} to {@code ns}, both up; returns {@code a}'s ifindex. */
    public static int veth(NetworkNamespace ns, String a, String b) {
        PodLink.vethWithin(ns, a, b);
        return ifindex(ns, a);
    }

    /** From {@code ip -o link show dev X}: "5: v0@v1: <...". */
    public static int ifindex(NetworkNamespace ns, String dev) {
        String line = ns.must("ip", "-o", "link", "show", "dev", dev).stdout().strip();
        return Integer.parseInt(line.substring(0, line.indexOf(':')));
    }
}
