package io.npmagent.bpf;

import io.npmagent.bpf.model.Rendered;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import java.util.Map;
import java.util.Set;

/** Finds the interface each local pod is behind ({@link PodInterfaces} on a node; a table in unit tests). */
interface PodPlacer {
    /**
     * The interface of each of {@code pods} that is a local pod of {@code endpoints} and has one; only
     * those not placed yet, or whose addresses changed, are looked up, or all of them with {@code rescan}.
     */
    Map<PodKey, Integer> place(Map<PodKey, Rendered.Endpoint> endpoints, Set<PodKey> pods, boolean rescan);

    /** The node's own addresses as of the last lookup. */
    Set<IpAddress> nodeAddresses();
}
