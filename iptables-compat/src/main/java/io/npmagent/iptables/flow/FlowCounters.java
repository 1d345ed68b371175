package io.npmagent.iptables.flow;

/**
 * Reads the kernel's per-flow counters: every element of the backend's flow sets. The backend's own tools
 * ({@code nft -j list set}, {@code ipset save}), through its command runner, so in its namespace.
 */
@FunctionalInterface
public interface FlowCounters {
    /** The flow sets' elements now; throws {@link io.npmagent.dataplane.backend.BackendException} if they cannot be read. */
    CountedFlow.Reading read();
}
