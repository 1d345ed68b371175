package io.npmagent.agent.deploy;

import com.google.gson.JsonArray;
import com.google.gson.JsonParser;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A Dockerfile's instructions, read as far as the deploy tests need: comments and parser directives
 * dropped, continuation lines joined, each instruction its keyword and the rest of its line.
 */
public record Dockerfile(List<Instruction> instructions) {

    public record Instruction(String keyword, String arguments) {
        /** The arguments in exec form (a JSON array of strings), as ENTRYPOINT and CMD should be given. */
        public List<String> execForm() {
            JsonArray array = JsonParser.parseString(arguments).getAsJsonArray();
            List<String> out = new ArrayList<>();
            array.forEach(e -> out.add(e.getAsString()));
            return out;
        }

        /** The words of a shell-form instruction (COPY's sources and destination, say), flags dropped. */
        public List<String> words() {
            List<String> out = new ArrayList<>();
            for (String w : arguments.trim().split("\\s+")) {
                if (!w.startsWith("--")) {
                    out.add(w);
                }
            }
            return out;
        }
    }

    public static Dockerfile parse(String text) {
        List<Instruction> out = new ArrayList<>();
        StringBuilder current = null;
        for (String line : text.split("\n", -1)) {
            String stripped = line.strip();
            if (current == null && (stripped.isEmpty() || stripped.startsWith("#"))) {
                continue;
            }
            if (current != null && stripped.startsWith("#")) {
                continue; // a comment inside a continued instruction
            }
            if (current == null) {
                current = new StringBuilder();
            }
            if (stripped.endsWith("\\")) {
                current.append(stripped, 0, stripped.length() - 1).append(' ');
                continue;
            }
            current.append(stripped);
            String whole = current.toString().strip();
            current = null;
            int space = whole.indexOf(' ');
            if (space < 0) {
                throw new IllegalArgumentException("an instruction without arguments: " + whole);
            }
            out.add(new Instruction(whole.substring(0, space).toUpperCase(Locale.ROOT), whole.substring(space + 1).strip()));
        }
        if (current != null) {
            throw new IllegalArgumentException("the last instruction continues past the end of the file");
        }
        return new Dockerfile(List.copyOf(out));
    }

    public List<Instruction> all(String keyword) {
        return instructions.stream().filter(i -> i.keyword().equals(keyword)).toList();
    }

    /** The one instruction with {@code keyword}; Docker uses the last of several ENTRYPOINTs or CMDs, we want one. */
    public Instruction only(String keyword) {
        List<Instruction> found = all(keyword);
        if (found.size() != 1) {
            throw new IllegalStateException(found.size() + " " + keyword + " instructions, expected one");
        }
        return found.get(0);
    }
}
