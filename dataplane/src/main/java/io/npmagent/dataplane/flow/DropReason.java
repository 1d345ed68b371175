package io.npmagent.dataplane.flow;

/** Why a denied flow's packets were dropped: a policy, or a drop that is not policy's. */
public enum DropReason {
    /** A ClusterNetworkPolicy Deny, or NetworkPolicy isolation that no rule lifts. */
    POLICY("policy"),
    /** A packet that should belong to a connection the agent has no record of (eBPF: a deferred packet whose sender is gone). */
    NO_CONNECTION_STATE("no-connection-state"),
    /** The pod's egress queue past its bandwidth limit's horizon. */
    BANDWIDTH_HORIZON("bandwidth-horizon"),
    /** A packet the datapath could not read, so never judged open. */
    MALFORMED("malformed");

    private final String label;

    DropReason(String label) {
        this.label = label;
    }

    /** The spelling in flows' output and in metric labels. */
    public String label() {
        return label;
    }

    /**
     * The reason a kernel code names (verdicts.h's NPM_REASON_*: 1 + this enum's ordinal; 0 is "allowed"), or null for 0
     * and for codes this agent does not know.
     */
    public static DropReason ofCode(int code) {
        return code >= 1 && code <= values().length ? values()[code - 1] : null;
    }
}
