package io.npmagent.dataplane.model;

/** The direction a policy isolates; also the value of {@code policyTypes} entries. */
public enum Direction {
    INGRESS("Ingress"),
    EGRESS("Egress");

    private final String apiName;

    Direction(String apiName) {
        this.apiName = apiName;
    }

    /** The spelling in {@code spec.policyTypes}. */
    public String apiName() {
        return apiName;
    }
}
