package io.npmagent.dataplane.model;

import java.util.ArrayList;
import java.util.List;

/** Collects the {@link ValidationError}s of one object while it is checked field by field. */
public final class FieldErrors {
    private final ObjectRef object;
    private final List<ValidationError> errors = new ArrayList<>();

    public FieldErrors(ObjectRef object) {
        this.object = object;
    }

    public void add(String field, String reason) {
        errors.add(new ValidationError(object, field, reason));
    }

    public int count() {
        return errors.size();
    }

    public List<ValidationError> list() {
        return List.copyOf(errors);
    }
}
