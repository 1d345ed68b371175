package io.npmagent.dataplane.model;

/**
 * The tiers a connection is judged in, in the order they are walked for each direction: Admin, then
 * NetworkPolicy, then Baseline (then the default, allow, which is no tier). A ClusterNetworkPolicy
 * names Admin or Baseline in {@code spec.tier}; the NetworkPolicy tier holds the namespaced
 * networking.k8s.io/v1 policies and has no API spelling of its own.
 */
public enum Tier {
    ADMIN("Admin"),
    NETWORK_POLICY("NetworkPolicy"),
    BASELINE("Baseline");

    private final String apiName;

    Tier(String apiName) {
        this.apiName = apiName;
    }

    /** {@code Admin} and {@code Baseline} as in {@code spec.tier}; {@code NetworkPolicy} for the middle tier. */
    public String apiName() {
        return apiName;
    }

    /**
     * The tier {@code spec.tier} names ({@code Admin} or {@code Baseline}, case-sensitive as the CRD's
     * enum), or null for anything else, the NetworkPolicy tier's name included.
     */
    public static Tier parseClusterTier(String text) {
        if (ADMIN.apiName.equals(text)) {
            return ADMIN;
        }
        if (BASELINE.apiName.equals(text)) {
            return BASELINE;
        }
        return null;
    }
}
