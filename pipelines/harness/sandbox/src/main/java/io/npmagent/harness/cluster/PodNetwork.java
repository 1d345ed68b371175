package io.npmagent.harness.cluster;

import java.util.Locale;

/**
 * How pods on different nodes reach each other: {@code host-gw} (routes on the underlay, no encapsulation:
 * {@link HostGw}) or {@code vxlan} (flannel's VXLAN overlay, its smaller MTU: {@link Flannel}). Neither
 * masquerades: a pod's packets reach pods on other nodes with the pod's own source address.
 */
public enum PodNetwork {
    HOST_GW, VXLAN;

    public static PodNetwork of(String name) {
        for (PodNetwork p : values()) {
            if (p.toString().equals(name)) {
                return p;
            }
        }
        throw new IllegalArgumentException("pod network " + name + ": host-gw or vxlan");
    }

    /** The step that makes it on a node. */
    Step.NodeAction step() {
        return this == HOST_GW ? new HostGw() : new Flannel();
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
