package io.npmagent.dataplane.model;

/** {@code status.phase}. Pods in a terminal phase have given their addresses back. */
public enum PodPhase {
    PENDING,
    RUNNING,
    SUCCEEDED,
    FAILED,
    UNKNOWN;

    public boolean terminal() {
        return this == SUCCEEDED || this == FAILED;
    }

    /** Parses the API spelling ({@code Running}); null or unrecognised text is {@link #UNKNOWN}. */
    public static PodPhase parse(String text) {
        if (text == null) {
            return UNKNOWN;
        }
        for (PodPhase p : values()) {
            if (p.name().equalsIgnoreCase(text)) {
                return p;
            }
        }
        return UNKNOWN;
    }
}
