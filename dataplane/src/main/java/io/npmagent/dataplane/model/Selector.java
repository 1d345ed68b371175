package io.npmagent.dataplane.model;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A validated label selector in canonical form (sorted), so two selectors that are written alike are
 * equal and can share one peer set. The empty selector matches every label set.
 *
 * <p>Semantics (metav1.LabelSelectorAsSelector): every {@code matchLabels} pair and every requirement
 * must hold. {@code In}: the label is present with one of the values. {@code NotIn}: the label is
 * absent or has none of the values. {@code Exists} / {@code DoesNotExist}: presence of the key.
 */
public record Selector(SortedMap<String, String> matchLabels, List<Requirement> requirements) {
    public static final Selector ALL = new Selector(new TreeMap<>(), List.of());

    private static final Comparator<Requirement> REQUIREMENT_ORDER = Comparator.comparing(Requirement::key)
            .thenComparing(Requirement::operator)
            .thenComparing(r -> String.join("\u0000", r.values()));

    public Selector {
        matchLabels = Collections.unmodifiableSortedMap(new TreeMap<>(matchLabels));
        TreeSet<Requirement> sorted = new TreeSet<>(REQUIREMENT_ORDER);
        sorted.addAll(requirements);
        requirements = List.copyOf(sorted);
    }

    public enum Operator {
        IN("In"),
        NOT_IN("NotIn"),
        EXISTS("Exists"),
        DOES_NOT_EXIST("DoesNotExist");

        private final String apiName;

        Operator(String apiName) {
            this.apiName = apiName;
        }

        public String apiName() {
            return apiName;
        }

        static Operator parse(String text) {
            for (Operator op : values()) {
                if (op.apiName.equals(text)) {
                    return op;
                }
            }
            return null;
        }
    }

    public record Requirement(String key, Operator operator, SortedSet<String> values) {
        public Requirement {
            values = Collections.unmodifiableSortedSet(new TreeSet<>(values));
        }

        boolean matches(Map<String, String> labels) {
            String v = labels.get(key);
            return switch (operator) {
                case IN -> v != null && values.contains(v);
                case NOT_IN -> v == null || !values.contains(v);
                case EXISTS -> v != null;
                case DOES_NOT_EXIST -> v == null;
            };
        }
    }

    public boolean isEmpty() {
        return matchLabels.isEmpty() && requirements.isEmpty();
    }

    public boolean matches(Map<String, String> labels) {
        for (Map.Entry<String, String> e : matchLabels.entrySet()) {
            if (!e.getValue().equals(labels.get(e.getKey()))) {
                return false;
            }
        }
        for (Requirement r : requirements) {
            if (!r.matches(labels)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Validates {@code raw} as the API server does and returns the selector, or null if anything in it
     * is invalid (each problem is added to {@code errors} under {@code field}). A null {@code raw} is
     * the empty selector.
     */
    public static Selector parse(LabelSelector raw, String field, FieldErrors errors) {
        if (raw == null) {
            return ALL;
        }
        int before = errors.count();
        TreeMap<String, String> labels = new TreeMap<>();
        for (Map.Entry<String, String> e : raw.matchLabels().entrySet()) {
            String keyProblem = ApiSyntax.labelKeyProblem(e.getKey());
            if (keyProblem != null) {
                errors.add(field + ".matchLabels", keyProblem);
            }
            String valueProblem = ApiSyntax.labelValueProblem(e.getValue());
            if (valueProblem != null) {
                errors.add(field + ".matchLabels[" + ApiSyntax.quote(e.getKey()) + "]", valueProblem);
            }
            labels.put(e.getKey(), e.getValue());
        }
        List<Requirement> requirements = new ArrayList<>();
        for (int i = 0; i < raw.matchExpressions().size(); i++) {
            LabelSelector.Requirement r = raw.matchExpressions().get(i);
            String at = field + ".matchExpressions[" + i + "]";
            String keyProblem = ApiSyntax.labelKeyProblem(r.key());
            if (keyProblem != null) {
                errors.add(at + ".key", keyProblem);
            }
            Operator op = Operator.parse(r.operator());
            if (op == null) {
                errors.add(at + ".operator", "unknown operator " + ApiSyntax.quote(r.operator())
                        + " (In, NotIn, Exists or DoesNotExist)");
                continue;
            }
            boolean needsValues = op == Operator.IN || op == Operator.NOT_IN;
            if (needsValues && r.values().isEmpty()) {
                errors.add(at + ".values", "must be specified when operator is " + op.apiName());
            } else if (!needsValues && !r.values().isEmpty()) {
                errors.add(at + ".values", "may not be specified when operator is " + op.apiName());
            }
            for (int j = 0; j < r.values().size(); j++) {
                String valueProblem = ApiSyntax.labelValueProblem(r.values().get(j));
                if (valueProblem != null) {
                    errors.add(at + ".values[" + j + "]", valueProblem);
                }
            }
            requirements.add(new Requirement(r.key(), op, new TreeSet<>(r.values())));
        }
        return errors.count() == before ? new Selector(labels, requirements) : null;
    }

    /**
     * Stable text such as {@code {app=web, tier In (a,b), !legacy}}. Unambiguous because a valid key or
     * value cannot hold the separators, so it may feed the hashes that name peer sets.
     */
    @Override
    public String toString() {
        List<String> parts = new ArrayList<>();
        matchLabels.forEach((k, v) -> parts.add(k + "=" + v));
        for (Requirement r : requirements) {
            parts.add(switch (r.operator()) {
                case IN -> r.key() + " In (" + String.join(",", r.values()) + ")";
                case NOT_IN -> r.key() + " NotIn (" + String.join(",", r.values()) + ")";
                case EXISTS -> r.key();
                case DOES_NOT_EXIST -> "!" + r.key();
            });
        }
        return "{" + String.join(", ", parts) + "}";
    }
}
