package io.npmagent.agent.deploy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The declarations of {@code npm-agent/image/build} the deploy tests read: top-level bash assignments
 * starting on a line of their own, {@code name=(word ...)} (on one line or several, comments allowed) or
 * {@code name=word}. Only plain words are read: a declaration with quotes, {@code $}, backquotes or
 * backslashes could mean something else to bash than to this reader, so asking for one fails, as does
 * asking for a name declared more than once.
 */
public record ImageBuild(Map<String, List<Declaration>> declarations) {
    private static final Pattern ASSIGNMENT = Pattern.compile("^([A-Za-z_][A-Za-z0-9_]*)=(.*)$");
    private static final Pattern PLAIN = Pattern.compile("[^'\"$`\\\\()]+");

    /** One assignment: its words, or null when they are not all plain. */
    public record Declaration(int line, List<String> words) {}

    public static ImageBuild parse(String script) {
        String[] lines = script.split("\n", -1);
        Map<String, List<Declaration>> out = new LinkedHashMap<>();
        for (int i = 0; i < lines.length; i++) {
            Matcher m = ASSIGNMENT.matcher(lines[i]);
            if (!m.matches()) {
                continue;
            }
            int first = i;
            String value = withoutComment(m.group(2)).strip();
            List<String> words;
            if (value.startsWith("(")) {
                StringBuilder array = new StringBuilder(value.substring(1));
                while (!array.toString().strip().endsWith(")")) {
                    if (++i == lines.length) {
                        throw new IllegalArgumentException("line " + (first + 1) + ": array " + m.group(1) + " never closes");
                    }
                    array.append(' ').append(withoutComment(lines[i]).strip());
                }
                String inside = array.toString().strip();
                words = plainWords(inside.substring(0, inside.length() - 1));
            } else {
                words = value.isEmpty() || value.contains(" ") ? null : plainWords(value);
            }
            out.computeIfAbsent(m.group(1), k -> new ArrayList<>()).add(new Declaration(first + 1, words));
        }
        return new ImageBuild(out);
    }

    /** The words of array {@code name}. */
    public List<String> words(String name) {
        List<Declaration> found = declarations.getOrDefault(name, List.of());
        if (found.size() != 1) {
            throw new IllegalStateException("npm-agent/image/build declares " + name + " " + found.size() + " times, expected once");
        }
        Declaration d = found.get(0);
        if (d.words() == null) {
            throw new IllegalStateException("npm-agent/image/build line " + d.line() + ": " + name
                    + " is not plain words (no quotes, $, backquotes or backslashes), so the tests cannot read it");
        }
        return d.words();
    }

    /** The one word of {@code name}. */
    public String word(String name) {
        List<String> w = words(name);
        if (w.size() != 1) {
            throw new IllegalStateException("npm-agent/image/build: " + name + " is " + w + ", expected one word");
        }
        return w.get(0);
    }

    /** A comment starts at a # that begins a word. */
    private static String withoutComment(String line) {
        for (int i = 0; i < line.length(); i++) {
            if (line.charAt(i) == '#' && (i == 0 || Character.isWhitespace(line.charAt(i - 1)))) {
                return line.substring(0, i);
            }
        }
        return line;
    }

    private static List<String> plainWords(String text) {
        List<String> out = new ArrayList<>();
        for (String w : text.strip().split("\\s+")) {
            if (w.isEmpty()) {
                continue;
            }
            if (!PLAIN.matcher(w).matches()) {
                return null;
            }
            out.add(w);
        }
        return List.copyOf(out);
    }
}
