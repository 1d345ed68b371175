package io.npmagent.dataplane.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NamespaceTest {

    @Test
    void addsTheNameLabelWhenAbsent() {
        Namespace ns = new Namespace("team-a", Map.of("env", "prod"));

        assertThat(ns.labels())
                .containsEntry("kubernetes.io/metadata.name", "team-a")
                .containsEntry("env", "prod")
                .hasSize(2);
    }

    @Test
    void overwritesANameLabelThatDisagreesWithTheName() {
        Namespace ns = new Namespace("team-a", Map.of(Namespace.NAME_LABEL, "kube-system"));

        assertThat(ns.labels()).containsExactly(Map.entry(Namespace.NAME_LABEL, "team-a"));
    }

    @Test
    void nullLabelsStillGetTheNameLabel() {
        assertThat(new Namespace("x", null).labels()).containsExactly(Map.entry(Namespace.NAME_LABEL, "x"));
    }

    @Test
    void unknownNamespaceHasOnlyTheNameLabel() {
        assertThat(Namespace.unknown("y").labels()).containsExactly(Map.entry(Namespace.NAME_LABEL, "y"));
    }

    @Test
    void nameLabelConstantIsTheKubernetesOne() {
        assertThat(Namespace.NAME_LABEL).isEqualTo("kubernetes.io/metadata.name");
    }

    @Test
    void labelsAreACopyThatCannotBeChangedLater() {
        Map<String, String> input = new HashMap<>(Map.of("env", "prod"));
        Namespace ns = new Namespace("x", input);
        input.put("env", "dev");
        input.put(Namespace.NAME_LABEL, "other");

        assertThat(ns.labels()).containsEntry("env", "prod").containsEntry(Namespace.NAME_LABEL, "x");
        assertThat(ns.labels()).isUnmodifiable();
    }

    @Test
    void aSelectorOnTheNameLabelMatchesTheNamespace() {
        Selector byName = Selector.parse(
                LabelSelector.matchLabels(Map.of(Namespace.NAME_LABEL, "team-a")), "f", new FieldErrors(ObjectRef.namespace("t")));

        assertThat(byName.matches(new Namespace("team-a", Map.of(Namespace.NAME_LABEL, "evil")).labels())).isTrue();
        assertThat(byName.matches(new Namespace("evil", Map.of(Namespace.NAME_LABEL, "team-a")).labels())).isFalse();
    }

    @Test
    void requiresAName() {
        assertThatNullPointerException().isThrownBy(() -> new Namespace(null, Map.of()));
    }
}
