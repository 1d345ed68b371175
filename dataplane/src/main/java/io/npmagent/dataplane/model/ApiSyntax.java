package io.npmagent.dataplane.model;

import java.util.regex.Pattern;

/**
 * The API server's syntax rules for the strings NetworkPolicy validation checks
 * (k8s.io/apimachinery/pkg/util/validation). Each method returns null when the text is valid, else
 * the reason, worded like the API server's.
 */
public final class ApiSyntax {
    private static final Pattern QUALIFIED_NAME = Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
    private static final Pattern DNS1123_SUBDOMAIN =
            Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
    private static final Pattern LABEL_VALUE = Pattern.compile("(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?");
    private static final Pattern IANA_SVC_NAME = Pattern.compile("[-a-z0-9]+");

    private ApiSyntax() {}

    /** A label key: an optional DNS subdomain prefix and "/", then a name of at most 63 characters. */
    public static String labelKeyProblem(String key) {
        if (key == null || key.isEmpty()) {
            return "a label key must not be empty";
        }
        String name = key;
        int slash = key.lastIndexOf('/');
        if (slash >= 0) {
            String prefix = key.substring(0, slash);
            name = key.substring(slash + 1);
            if (prefix.isEmpty() || prefix.length() > 253 || !DNS1123_SUBDOMAIN.matcher(prefix).matches()) {
                return "label key " + quote(key) + ": the prefix must be a DNS subdomain (lower case, at most 253 characters)";
            }
        }
        if (name.isEmpty() || name.length() > 63 || !QUALIFIED_NAME.matcher(name).matches()) {
            return "label key " + quote(key) + ": the name part must be at most 63 characters, alphanumeric, '-', '_' or '.', "
                    + "starting and ending with an alphanumeric character";
        }
        return null;
    }

    public static String labelValueProblem(String value) {
        if (value == null) {
            return "a label value must not be null";
        }
        if (value.length() > 63 || !LABEL_VALUE.matcher(value).matches()) {
            return "label value " + quote(value) + " must be empty or at most 63 characters, alphanumeric, '-', '_' or '.', "
                    + "starting and ending with an alphanumeric character";
        }
        return null;
    }

    /** IANA_SVC_NAME: the syntax of a named port (RFC 6335). */
    public static String portNameProblem(String name) {
        if (name == null || name.isEmpty()) {
            return "a port name must not be empty";
        }
        if (name.length() > 15) {
            return "port name " + quote(name) + " must be no more than 15 characters";
        }
        if (!IANA_SVC_NAME.matcher(name).matches()) {
            return "port name " + quote(name) + " must contain only lower-case alphanumeric characters and '-'";
        }
        if (name.contains("--")) {
            return "port name " + quote(name) + " must not contain consecutive hyphens";
        }
        if (name.startsWith("-") || name.endsWith("-")) {
            return "port name " + quote(name) + " must not begin or end with a hyphen";
        }
        if (name.chars().noneMatch(c -> c >= 'a' && c <= 'z')) {
            return "port name " + quote(name) + " must contain at least one letter";
        }
        return null;
    }

    /**
     * Quotes untrusted text for a message: control characters are escaped and long text is cut, so
     * a hostile value cannot forge log lines or flood them.
     */
    public static String quote(String text) {
        if (text == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder("\"");
        int limit = Math.min(text.length(), 256);
        escape(text, limit, true, sb);
        if (text.length() > limit) {
            sb.append("...");
        }
        return sb.append('"').toString();
    }

    /**
     * {@code text} with line breaks and other control characters escaped, nothing else changed or cut:
     * for output where untrusted text sits inside a line (a dump of desired state) and must stay there.
     */
    public static String escapeControls(String text) {
        StringBuilder sb = new StringBuilder(text.length());
        escape(text, text.length(), false, sb);
        return sb.toString();
    }

    private static void escape(String text, int limit, boolean quotes, StringBuilder sb) {
        for (int i = 0; i < limit; i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> sb.append(quotes ? "\\\"" : "\"");
                case '\\' -> sb.append(quotes ? "\\\\" : "\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == '\u2028' || c == '\u2029') {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
    }
}
