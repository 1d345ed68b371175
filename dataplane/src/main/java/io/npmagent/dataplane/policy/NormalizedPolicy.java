package io.npmagent.dataplane.policy;

import io.npmagent.dataplane.desired.CompiledPolicy;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Selector;
import io.npmagent.dataplane.model.ValidationError;
import java.util.List;

/**
 * A policy after {@link PolicyNormalizer}: which pods of its namespace it selects, what it enforces, and
 * what was wrong with it (empty for a valid policy).
 */
public record NormalizedPolicy(Selector podSelector, CompiledPolicy compiled, List<ValidationError> errors) {

    public NormalizedPolicy {
        errors = List.copyOf(errors);
    }

    public PolicyKey key() {
        return compiled.key();
    }

    public String namespace() {
        return compiled.key().namespace();
    }

    public boolean valid() {
        return errors.isEmpty();
    }
}
