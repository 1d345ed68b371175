package io.npmagent.dataplane.backend;

/**
 * What a backend holds in the kernel, for metrics and the CLI: policies (NetworkPolicies and
 * ClusterNetworkPolicies), rules, sets and their entries. The eBPF backend counts in its own units: policy-map entries as rules, local endpoints as
 * sets, ipcache prefixes as set entries.
 */
public record BackendStatus(String backend, int policies, long rules, long sets, long setEntries) {

    /** One line in the backend's own units. */
    public String summary() {
        if (backend.equals("bpf")) {
            return String.format("%d policies, %d policy-map entries, %d endpoints, %d ipcache prefixes", policies, rules, sets, setEntries);
        }
        return String.format("%d policies, %d rules, %d sets with %d entries", policies, rules, sets, setEntries);
    }
}
