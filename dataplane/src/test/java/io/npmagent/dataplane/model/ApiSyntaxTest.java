package io.npmagent.dataplane.model;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

class ApiSyntaxTest {

    private static final String HOSTILE = "x\"\nNetworkPolicy y/z: forged";

    @ParameterizedTest
    @ValueSource(strings = {"http", "serve-80-tcp", "a1", "1a", "h", "abcdefghijklmno", "dns-tcp"})
    void acceptsIanaServiceNames(String name) {
        assertThat(ApiSyntax.portNameProblem(name)).isNull();
    }

    @ParameterizedTest
    @NullAndEmptySource
    void rejectsMissingPortName(String name) {
        assertThat(ApiSyntax.portNameProblem(name)).contains("must not be empty");
    }

    @ParameterizedTest
    @CsvSource({
        "abcdefghijklmnop, no more than 15 characters",
        "HTTP, lower-case alphanumeric",
        "a_b, lower-case alphanumeric",
        "a.b, lower-case alphanumeric",
        "a b, lower-case alphanumeric",
        "-a, begin or end with a hyphen",
        "a-, begin or end with a hyphen",
        "a--b, consecutive hyphens",
        "80, at least one letter",
        "8-0, at least one letter",
    })
    void rejectsInvalidPortNamesSayingWhy(String name, String reason) {
        assertThat(ApiSyntax.portNameProblem(name)).contains(reason).contains("\"" + name + "\"");
    }

    @Test
    void hostilePortNameYieldsASingleLineMessage() {
        assertThat(ApiSyntax.portNameProblem(HOSTILE)).isNotNull().doesNotContain("\n");
    }

    @Test
    void quoteWrapsPlainTextInDoubleQuotes() {
        assertThat(ApiSyntax.quote("web")).isEqualTo("\"web\"");
        assertThat(ApiSyntax.quote("")).isEqualTo("\"\"");
        assertThat(ApiSyntax.quote(null)).isEqualTo("null");
    }

    @Test
    void quoteEscapesQuotesBackslashesAndLineBreaks() {
        assertThat(ApiSyntax.quote("a\"b")).isEqualTo("\"a\\\"b\"");
        assertThat(ApiSyntax.quote("a\\b")).isEqualTo("\"a\\\\b\"");
        assertThat(ApiSyntax.quote("a\nb")).isEqualTo("\"a\\nb\"");
        assertThat(ApiSyntax.quote("a\rb")).isEqualTo("\"a\\rb\"");
        assertThat(ApiSyntax.quote("a\tb")).isEqualTo("\"a\\tb\"");
    }

    @Test
    void quoteEscapesOtherControlCharactersAsUnicodeEscapes() {
        assertThat(ApiSyntax.quote("\u0000")).isEqualTo("\"\\u0000\"");
        assertThat(ApiSyntax.quote("\u001b[31m")).isEqualTo("\"\\u001b[31m\"");
        assertThat(ApiSyntax.quote("\u007f")).isEqualTo("\"\\u007f\"");
        assertThat(ApiSyntax.quote("\u0085")).isEqualTo("\"\\u0085\""); // NEL, a C1 line break
        assertThat(ApiSyntax.quote("a\u2028b\u2029")).isEqualTo("\"a\\u2028b\\u2029\"");
    }

    @Test
    void quoteKeepsPrintableNonAsciiText() {
        assertThat(ApiSyntax.quote("café")).isEqualTo("\"café\"");
    }

    @Test
    void quoteTruncatesLongInput() {
        String quoted = ApiSyntax.quote("a".repeat(10_000));

        assertThat(quoted).hasSize(1 + 256 + 3 + 1).startsWith("\"aaa").endsWith("a...\"");
    }

    @Test
    void quoteDoesNotTruncateTextOfExactlyTheLimit() {
        assertThat(ApiSyntax.quote("a".repeat(256))).isEqualTo("\"" + "a".repeat(256) + "\"");
    }

    @Test
    void hostileValueCannotForgeALogLine() {
        String quoted = ApiSyntax.quote(HOSTILE);

        assertThat(quoted).isEqualTo("\"x\\\"\\nNetworkPolicy y/z: forged\"");
        assertThat(quoted).doesNotContain("\n").doesNotContain("\r");
    }

    @Test
    void hostileLabelKeyAndValueYieldSingleLineMessages() {
        assertThat(ApiSyntax.labelKeyProblem(HOSTILE)).isNotNull().doesNotContain("\n");
        assertThat(ApiSyntax.labelKeyProblem("ok/" + HOSTILE)).isNotNull().doesNotContain("\n");
        assertThat(ApiSyntax.labelValueProblem(HOSTILE)).isNotNull().doesNotContain("\n");
    }

    @Test
    void labelValueMayBeEmptyButNotNull() {
        assertThat(ApiSyntax.labelValueProblem("")).isNull();
        assertThat(ApiSyntax.labelValueProblem(null)).isNotNull();
    }
}
