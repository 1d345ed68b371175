package io.npmagent.dataplane.batch;

import java.util.List;

/**
 * What one flush did: how many NetworkPolicy changes and changes in all it sent, whether it went as one
 * transaction, and the parts that were refused.
 */
public record FlushResult(int policyChanges, int changes, boolean oneTransaction, List<UnitFailure> failures) {
    public static final FlushResult NOTHING = new FlushResult(0, 0, true, List.of());

    public FlushResult {
        failures = List.copyOf(failures);
    }

    public boolean landed() {
        return failures.isEmpty();
    }
}
