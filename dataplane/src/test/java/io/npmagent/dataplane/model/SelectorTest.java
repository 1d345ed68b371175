package io.npmagent.dataplane.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SelectorTest {

    private static final ObjectRef OBJECT = new ObjectRef("NetworkPolicy", "x", "p");
    private static final String FIELD = "spec.podSelector";

    private static LabelSelector.Requirement req(String key, String operator, String... values) {
        return new LabelSelector.Requirement(key, operator, values.length == 0 ? null : Arrays.asList(values));
    }

    private static LabelSelector expressions(LabelSelector.Requirement... requirements) {
        return new LabelSelector(Map.of(), List.of(requirements));
    }

    /** Parses a selector that must be valid. */
    private static Selector valid(LabelSelector raw) {
        FieldErrors errors = new FieldErrors(OBJECT);
        Selector selector = Selector.parse(raw, FIELD, errors);
        assertThat(errors.list()).as("errors of %s", raw).isEmpty();
        assertThat(selector).isNotNull();
        return selector;
    }

    /** Parses a selector that must be invalid and returns its errors. */
    private static List<ValidationError> invalid(LabelSelector raw) {
        FieldErrors errors = new FieldErrors(OBJECT);
        Selector selector = Selector.parse(raw, FIELD, errors);
        assertThat(selector).as("selector parsed from %s", raw).isNull();
        assertThat(errors.list()).isNotEmpty().allSatisfy(e -> assertThat(e.object()).isEqualTo(OBJECT));
        return errors.list();
    }

    @Nested
    class Matching {

        @Test
        void emptySelectorMatchesEverythingIncludingNoLabels() {
            Selector all = valid(LabelSelector.EMPTY);

            assertThat(all.isEmpty()).isTrue();
            assertThat(all).isEqualTo(Selector.ALL);
            assertThat(all.matches(Map.of())).isTrue();
            assertThat(all.matches(Map.of("app", "web"))).isTrue();
        }

        @Test
        void nullSelectorIsTheEmptySelector() {
            assertThat(valid(null)).isEqualTo(Selector.ALL);
        }

        @Test
        void matchLabelsRequiresEveryPairWithTheExactValue() {
            Selector s = valid(LabelSelector.matchLabels(Map.of("app", "web", "tier", "front")));

            assertThat(s.isEmpty()).isFalse();
            assertThat(s.matches(Map.of("app", "web", "tier", "front"))).isTrue();
            assertThat(s.matches(Map.of("app", "web", "tier", "front", "extra", "x"))).isTrue();
            assertThat(s.matches(Map.of("app", "web"))).isFalse();
            assertThat(s.matches(Map.of("app", "web", "tier", "back"))).isFalse();
            assertThat(s.matches(Map.of("app", "Web", "tier", "front"))).isFalse();
            assertThat(s.matches(Map.of())).isFalse();
        }

        @Test
        void matchLabelsWithAnEmptyValueNeedsTheLabelPresentAndEmpty() {
            Selector s = valid(LabelSelector.matchLabels(Map.of("flag", "")));

            assertThat(s.matches(Map.of("flag", ""))).isTrue();
            assertThat(s.matches(Map.of())).isFalse();
            assertThat(s.matches(Map.of("flag", "x"))).isFalse();
        }

        @Test
        void inNeedsTheLabelPresentWithOneOfTheValues() {
            Selector s = valid(expressions(req("env", "In", "prod", "staging")));

            assertThat(s.matches(Map.of("env", "prod"))).isTrue();
            assertThat(s.matches(Map.of("env", "staging"))).isTrue();
            assertThat(s.matches(Map.of("env", "dev"))).isFalse();
            assertThat(s.matches(Map.of())).isFalse();
        }

        @Test
        void notInMatchesWhenTheLabelIsAbsentOrHasNoneOfTheValues() {
            Selector s = valid(expressions(req("env", "NotIn", "prod", "staging")));

            assertThat(s.matches(Map.of())).isTrue();
            assertThat(s.matches(Map.of("other", "prod"))).isTrue();
            assertThat(s.matches(Map.of("env", "dev"))).isTrue();
            assertThat(s.matches(Map.of("env", "prod"))).isFalse();
            assertThat(s.matches(Map.of("env", "staging"))).isFalse();
        }

        @Test
        void existsNeedsTheKeyWhateverItsValue() {
            Selector s = valid(expressions(req("app", "Exists")));

            assertThat(s.matches(Map.of("app", ""))).isTrue();
            assertThat(s.matches(Map.of("app", "anything"))).isTrue();
            assertThat(s.matches(Map.of("apps", "x"))).isFalse();
            assertThat(s.matches(Map.of())).isFalse();
        }

        @Test
        void doesNotExistNeedsTheKeyAbsent() {
            Selector s = valid(expressions(req("legacy", "DoesNotExist")));

            assertThat(s.matches(Map.of())).isTrue();
            assertThat(s.matches(Map.of("app", "web"))).isTrue();
            assertThat(s.matches(Map.of("legacy", ""))).isFalse();
            assertThat(s.matches(Map.of("legacy", "true"))).isFalse();
        }

        @Test
        void everyLabelAndEveryExpressionMustHold() {
            Selector s = valid(new LabelSelector(
                    Map.of("app", "web"),
                    List.of(req("env", "In", "prod"), req("legacy", "DoesNotExist"))));

            assertThat(s.matches(Map.of("app", "web", "env", "prod"))).isTrue();
            assertThat(s.matches(Map.of("app", "db", "env", "prod"))).isFalse();
            assertThat(s.matches(Map.of("app", "web", "env", "dev"))).isFalse();
            assertThat(s.matches(Map.of("app", "web", "env", "prod", "legacy", "1"))).isFalse();
        }

        @Test
        void contradictoryExpressionsMatchNothing() {
            Selector s = valid(expressions(req("a", "Exists"), req("a", "DoesNotExist")));

            assertThat(s.matches(Map.of())).isFalse();
            assertThat(s.matches(Map.of("a", "1"))).isFalse();
        }
    }

    @Nested
    class Validation {

        @ParameterizedTest
        @ValueSource(strings = {"in", "Equals", "notin", "Exist", "", "IN"})
        void unknownOperatorIsReportedAtTheOperatorField(String operator) {
            List<ValidationError> errors = invalid(expressions(req("app", "Exists"), req("env", operator, "x")));

            assertThat(errors).singleElement().satisfies(e -> {
                assertThat(e.field()).isEqualTo("spec.podSelector.matchExpressions[1].operator");
                assertThat(e.reason()).contains("unknown operator").contains("\"" + operator + "\"");
            });
        }

        @Test
        void nullOperatorIsUnknown() {
            assertThat(invalid(expressions(req("app", null))))
                    .extracting(ValidationError::field)
                    .containsExactly("spec.podSelector.matchExpressions[0].operator");
        }

        @ParameterizedTest
        @ValueSource(strings = {"In", "NotIn"})
        void inAndNotInNeedValues(String operator) {
            assertThat(invalid(expressions(req("app", operator))))
                    .singleElement()
                    .satisfies(e -> {
                        assertThat(e.field()).isEqualTo("spec.podSelector.matchExpressions[0].values");
                        assertThat(e.reason()).contains("must be specified");
                    });
        }

        @ParameterizedTest
        @ValueSource(strings = {"Exists", "DoesNotExist"})
        void existsAndDoesNotExistTakeNoValues(String operator) {
            assertThat(invalid(expressions(req("app", operator, "web"))))
                    .singleElement()
                    .satisfies(e -> {
                        assertThat(e.field()).isEqualTo("spec.podSelector.matchExpressions[0].values");
                        assertThat(e.reason()).contains("may not be specified");
                    });
        }

        @ParameterizedTest
        @ValueSource(strings = {"", "a b", "-a", "a-", "UPPER.case/x", "/x", "x/", "a/b/c", "a..b/x", "é"})
        void badLabelKeyInAnExpressionIsReportedAtItsKeyField(String key) {
            assertThat(invalid(expressions(req(key, "Exists"))))
                    .extracting(ValidationError::field)
                    .containsExactly("spec.podSelector.matchExpressions[0].key");
        }

        @Test
        void labelKeyNameLongerThan63IsRejected() {
            String name64 = "a".repeat(64);

            assertThat(invalid(expressions(req(name64, "Exists"))))
                    .extracting(ValidationError::field)
                    .containsExactly("spec.podSelector.matchExpressions[0].key");
            assertThat(invalid(expressions(req("example.com/" + name64, "Exists")))).hasSize(1);
            valid(expressions(req("a".repeat(63), "Exists")));
        }

        @Test
        void labelKeyPrefixLongerThan253IsRejected() {
            String prefix = ("a".repeat(62) + ".").repeat(4) + "bb"; // 254 characters

            assertThat(prefix).hasSize(254);
            assertThat(invalid(expressions(req(prefix + "/x", "Exists")))).hasSize(1);
            valid(expressions(req(prefix.substring(1) + "/x", "Exists")));
        }

        @Test
        void badLabelKeyInMatchLabelsIsReportedAtMatchLabels() {
            assertThat(invalid(LabelSelector.matchLabels(Map.of("a b", "x"))))
                    .extracting(ValidationError::field)
                    .containsExactly("spec.podSelector.matchLabels");
        }

        @ParameterizedTest
        @ValueSource(strings = {"kubernetes.io/metadata.name", "app", "a.b_c-d", "A", "Z9", "app.kubernetes.io/name",
                "a-b.example.com/UPPER_name"})
        void acceptsValidLabelKeys(String key) {
            valid(expressions(req(key, "Exists")));
            valid(LabelSelector.matchLabels(Map.of(key, "v")));
        }

        @ParameterizedTest
        @ValueSource(strings = {"a b", "-x", "x-", "_x", "x.", "a/b", "a\nb"})
        void badLabelValueInAnExpressionIsReportedAtItsIndex(String value) {
            assertThat(invalid(expressions(req("app", "In", "ok", value))))
                    .extracting(ValidationError::field)
                    .containsExactly("spec.podSelector.matchExpressions[0].values[1]");
        }

        @Test
        void labelValueLongerThan63IsRejected() {
            assertThat(invalid(expressions(req("app", "In", "v".repeat(64)))))
                    .extracting(ValidationError::field)
                    .containsExactly("spec.podSelector.matchExpressions[0].values[0]");
            valid(expressions(req("app", "In", "v".repeat(63))));
        }

        @Test
        void badLabelValueInMatchLabelsNamesItsKey() {
            assertThat(invalid(LabelSelector.matchLabels(Map.of("app", "-x"))))
                    .extracting(ValidationError::field)
                    .containsExactly("spec.podSelector.matchLabels[\"app\"]");
        }

        @ParameterizedTest
        @ValueSource(strings = {"", "a", "web-1", "a.b_c-d", "A1", "x9_-.Y"})
        void acceptsValidLabelValues(String value) {
            valid(LabelSelector.matchLabels(Map.of("app", value)));
        }

        @Test
        void reportsEveryProblemNotJustTheFirst() {
            List<ValidationError> errors = invalid(new LabelSelector(
                    Map.of("app", "-bad"),
                    List.of(req("-k", "Exists"), req("env", "Equals", "x"), req("tier", "In"))));

            assertThat(errors).extracting(ValidationError::field).containsExactlyInAnyOrder(
                    "spec.podSelector.matchLabels[\"app\"]",
                    "spec.podSelector.matchExpressions[0].key",
                    "spec.podSelector.matchExpressions[1].operator",
                    "spec.podSelector.matchExpressions[2].values");
        }

        @Test
        void errorsUseTheFieldPathTheCallerGives() {
            FieldErrors errors = new FieldErrors(OBJECT);
            Selector.parse(expressions(req("app", "Equals", "x")), "spec.ingress[2].from[1].namespaceSelector", errors);

            assertThat(errors.list()).extracting(ValidationError::field)
                    .containsExactly("spec.ingress[2].from[1].namespaceSelector.matchExpressions[0].operator");
        }

        @Test
        void hostileOperatorIsQuotedInTheReason() {
            List<ValidationError> errors = invalid(expressions(req("app", "In\"\nNetworkPolicy y/z: forged")));

            assertThat(errors).singleElement().satisfies(e -> assertThat(e.toString()).doesNotContain("\n"));
        }
    }

    @Nested
    class CanonicalForm {

        @Test
        void selectorsWrittenInADifferentOrderAreEqual() {
            Selector a = valid(new LabelSelector(
                    Map.of("app", "web", "tier", "front"),
                    List.of(req("env", "In", "prod", "staging"), req("legacy", "DoesNotExist"), req("zone", "Exists"))));
            Selector b = valid(new LabelSelector(
                    Map.of("tier", "front", "app", "web"),
                    List.of(req("zone", "Exists"), req("legacy", "DoesNotExist"), req("env", "In", "staging", "prod"))));

            assertThat(a).isEqualTo(b);
            assertThat(a).hasSameHashCodeAs(b);
            assertThat(a.toString()).isEqualTo(b.toString());
        }

        @Test
        void differentSelectorsAreNotEqualAndPrintDifferently() {
            Selector in = valid(expressions(req("env", "In", "prod")));
            Selector notIn = valid(expressions(req("env", "NotIn", "prod")));
            Selector labels = valid(LabelSelector.matchLabels(Map.of("env", "prod")));

            assertThat(in).isNotEqualTo(notIn).isNotEqualTo(labels);
            assertThat(in.toString()).isNotEqualTo(notIn.toString()).isNotEqualTo(labels.toString());
        }

        @Test
        void duplicateValuesCollapse() {
            assertThat(valid(expressions(req("env", "In", "prod", "prod", "dev"))))
                    .isEqualTo(valid(expressions(req("env", "In", "dev", "prod"))));
        }

        @Test
        void printsAStableReadableForm() {
            Selector s = valid(new LabelSelector(
                    Map.of("app", "web"),
                    List.of(req("tier", "In", "b", "a"), req("legacy", "DoesNotExist"), req("zone", "Exists"),
                            req("env", "NotIn", "dev"))));

            assertThat(s).hasToString("{app=web, env NotIn (dev), !legacy, tier In (a,b), zone}");
            assertThat(Selector.ALL).hasToString("{}");
        }

        @Test
        void isImmutable() {
            Selector s = valid(new LabelSelector(Map.of("app", "web"), List.of(req("env", "In", "prod"))));

            assertThat(s.matchLabels()).isUnmodifiable();
            assertThat(s.requirements()).isUnmodifiable();
            assertThat(s.requirements().get(0).values()).isUnmodifiable();
        }
    }
}
