package io.npmagent.dataplane.tier;

/**
 * What a ClusterNetworkPolicy rule does to the traffic it matches. {@code Accept} and {@code Deny} are
 * final for the direction; {@code Pass} skips the rest of the current tier and goes on to the next one:
 * from Admin to NetworkPolicy, from Baseline to the default (allow). A Deny drops silently, as
 * NetworkPolicy isolation does: the conformance suite's probes expect a timeout, and a refusal (a TCP
 * reset, an ICMP unreachable) fails them.
 */
public enum RuleAction {
    ACCEPT("Accept"),
    DENY("Deny"),
    PASS("Pass");

    private final String apiName;

    RuleAction(String apiName) {
        this.apiName = apiName;
    }

    public String apiName() {
        return apiName;
    }

    /** The action {@code action} names, case-sensitive as the CRD's enum; null for anything else. */
    public static RuleAction parse(String text) {
        for (RuleAction a : values()) {
            if (a.apiName.equals(text)) {
                return a;
            }
        }
        return null;
    }
}
