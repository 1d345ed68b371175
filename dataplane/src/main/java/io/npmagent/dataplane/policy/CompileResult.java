package io.npmagent.dataplane.policy;

import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.model.ValidationError;
import java.util.List;

/** What one cluster event did: the change to the desired state and what was wrong with the object. */
public record CompileResult(DesiredDelta delta, List<ValidationError> errors) {
    public CompileResult {
        errors = List.copyOf(errors);
    }
}
