package io.npmagent.dataplane.model;

import java.util.List;
import java.util.Map;

/**
 * A label selector as written in an object (metav1.LabelSelector), not yet validated: operators are
 * strings and may be wrong. {@link Selector#parse} turns it into something that can match.
 */
public record LabelSelector(Map<String, String> matchLabels, List<Requirement> matchExpressions) {
    public static final LabelSelector EMPTY = new LabelSelector(Map.of(), List.of());

    public LabelSelector {
        matchLabels = matchLabels == null ? Map.of() : Map.copyOf(matchLabels);
        matchExpressions = matchExpressions == null ? List.of() : List.copyOf(matchExpressions);
    }

    public static LabelSelector matchLabels(Map<String, String> labels) {
        return new LabelSelector(labels, List.of());
    }

    /** One {@code matchExpressions} entry as written; {@code values} may be null. */
    public record Requirement(String key, String operator, List<String> values) {
        public Requirement {
            values = values == null ? List.of() : List.copyOf(values);
        }
    }
}
