package io.npmagent.dataplane.eval;

import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.PolicyKey;

/** One rule of one policy: {@code x/allow-web spec.ingress[1]}. */
public record RuleRef(PolicyKey policy, Direction direction, int index) {
    @Override
    public String toString() {
        return policy + " spec." + direction.apiName().toLowerCase() + "[" + index + "]";
    }
}
