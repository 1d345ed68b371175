package io.npmagent.dataplane.model;

/**
 * One thing wrong with one object: which object, which field (a JSON path as the API server
 * prints it, e.g. {@code spec.ingress[0].from[1].ipBlock.except[0]}) and why.
 */
public record ValidationError(ObjectRef object, String field, String reason) {

    @Override
    public String toString() {
        return object + ": " + field + ": " + reason;
    }
}
