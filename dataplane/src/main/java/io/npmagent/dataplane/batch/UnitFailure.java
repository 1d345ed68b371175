package io.npmagent.dataplane.batch;

import io.npmagent.dataplane.backend.Batch;
import java.time.Instant;

/** A part of a batch the backend refused: what, why (the kernel's words), how often, and when it is tried again. */
public record UnitFailure(Batch.UnitKey unit, String error, int attempts, Instant retryAt) {
    @Override
    public String toString() {
        return unit + ": " + error + " (attempt " + attempts + ", retry at " + retryAt + ")";
    }
}
