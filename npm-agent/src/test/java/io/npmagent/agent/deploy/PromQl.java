package io.npmagent.agent.deploy;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Just enough of PromQL (and Grafana's query variables) to say which metrics an expression reads and
 * with which label matchers. Not a parser: strings, matchers, ranges and grouping clauses are cut out,
 * and what remains that is a name and not a function, keyword or number is a metric. Expressions this
 * cannot read faithfully ({@code __name__} matchers) are refused rather than guessed at.
 */
public final class PromQl {
    private static final Pattern STRING = Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`");
    private static final Pattern MATCHERS = Pattern.compile("\\{[^{}]*\\}");
    private static final Pattern RANGE = Pattern.compile("\\[[^\\[\\]]*\\]");
    private static final Pattern GROUPING = Pattern.compile("\\b(?:by|without|on|ignoring|group_left|group_right)\\s*\\([^()]*\\)");
    /** Grafana: label_values(metric{...}, label) reads metric; label_values(label) reads no metric. */
    private static final Pattern LABEL_VALUES = Pattern.compile("\\blabel_values\\s*\\(\\s*([^,()]*?)\\s*,\\s*[A-Za-z_][A-Za-z0-9_]*\\s*\\)");
    private static final Pattern LABEL_VALUES_OF_LABEL = Pattern.compile("\\blabel_values\\s*\\(\\s*[A-Za-z_][A-Za-z0-9_]*\\s*\\)");
    private static final Pattern GRAFANA_VARIABLE = Pattern.compile("\\$\\{[^}]*\\}|\\$[A-Za-z_][A-Za-z0-9_]*|\\[\\[[^\\]]*\\]\\]");
    private static final Pattern IDENTIFIER = Pattern.compile("(?<![A-Za-z0-9_:.])([A-Za-z_:][A-Za-z0-9_:]*)");
    private static final Set<String> KEYWORDS = Set.of("by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or",
            "unless", "offset", "atan2", "inf", "nan", "start", "end");

    private PromQl() {}

    /** The metric names {@code expr} reads, in order of appearance. */
    public static Set<String> metricNames(String expr) {
        if (expr.contains("__name__")) {
            throw new IllegalArgumentException("a __name__ matcher cannot be checked: name the metric: " + expr);
        }
        requireBalanced(expr);
        String s = replaceAll(STRING, expr, "\"\"");
        s = replaceAll(GRAFANA_VARIABLE, s, " ");
        s = replaceAll(MATCHERS, s, " ");
        s = replaceAll(RANGE, s, " ");
        s = LABEL_VALUES.matcher(s).replaceAll(m -> Matcher.quoteReplacement(" " + m.group(1) + " "));
        s = replaceAll(LABEL_VALUES_OF_LABEL, s, " ");
        s = replaceAll(GROUPING, s, " ");
        Set<String> out = new LinkedHashSet<>();
        Matcher m = IDENTIFIER.matcher(s);
        while (m.find()) {
            String name = m.group(1);
            int after = m.end();
            while (after < s.length() && Character.isWhitespace(s.charAt(after))) {
                after++;
            }
            boolean function = after < s.length() && s.charAt(after) == '(';
            if (!function && !KEYWORDS.contains(name.toLowerCase(java.util.Locale.ROOT))) {
                out.add(name);
            }
        }
        return out;
    }

    /** One selector of {@code metric} in {@code expr}: its label matchers as written, "" when it has none. */
    public record Selector(String metric, String matchers) {}

    /** Every selector of a metric in {@code expr} (each place a metric from {@link #metricNames} is read). */
    public static List<Selector> selectors(String expr) {
        Set<String> names = metricNames(expr);
        String noStrings = blankStrings(expr);
        List<Selector> out = new ArrayList<>();
        for (String name : names) {
            Matcher m = Pattern.compile("(?<![A-Za-z0-9_:.$])" + Pattern.quote(name) + "(?![A-Za-z0-9_:])").matcher(noStrings);
            while (m.find()) {
                int i = m.end();
                while (i < noStrings.length() && Character.isWhitespace(noStrings.charAt(i))) {
                    i++;
                }
                if (i < noStrings.length() && noStrings.charAt(i) == '(') {
                    continue; // a function of the same name
                }
                if (insideMatchers(noStrings, m.start())) {
                    continue; // a label name or value, not a selector
                }
                if (i < noStrings.length() && noStrings.charAt(i) == '{') {
                    int close = noStrings.indexOf('}', i);
                    out.add(new Selector(name, expr.substring(i + 1, close).strip()));
                } else {
                    out.add(new Selector(name, ""));
                }
            }
        }
        return out;
    }

    /** Whether position {@code at} lies between a '{' and its '}'. */
    private static boolean insideMatchers(String s, int at) {
        int open = s.lastIndexOf('{', at);
        return open >= 0 && s.lastIndexOf('}', at) < open;
    }

    /** Brackets, braces and parentheses outside strings pair up. */
    public static void requireBalanced(String expr) {
        String s = blankStrings(expr);
        java.util.ArrayDeque<Character> open = new java.util.ArrayDeque<>();
        for (char c : s.toCharArray()) {
            switch (c) {
                case '(', '[', '{' -> open.push(c);
                case ')', ']', '}' -> {
                    char expected = c == ')' ? '(' : c == ']' ? '[' : '{';
                    if (open.isEmpty() || open.pop() != expected) {
                        throw new IllegalArgumentException("unbalanced '" + c + "' in: " + expr);
                    }
                }
                default -> {}
            }
        }
        if (!open.isEmpty()) {
            throw new IllegalArgumentException("unclosed '" + open.peek() + "' in: " + expr);
        }
    }

    /** {@code expr} with the inside of every string literal replaced by spaces (positions kept). */
    private static String blankStrings(String expr) {
        StringBuilder b = new StringBuilder(expr);
        Matcher m = STRING.matcher(expr);
        while (m.find()) {
            for (int i = m.start() + 1; i < m.end() - 1; i++) {
                b.setCharAt(i, ' ');
            }
        }
        return b.toString();
    }

    private static String replaceAll(Pattern p, String s, String with) {
        String before;
        do {
            before = s;
            s = p.matcher(s).replaceAll(Matcher.quoteReplacement(with));
        } while (!s.equals(before));
        return s;
    }
}
