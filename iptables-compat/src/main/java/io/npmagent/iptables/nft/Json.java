package io.npmagent.iptables.nft;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small, strict JSON reader for {@code nft -j} output (RFC 8259): objects become
 * {@code Map<String, Object>} in document order, arrays {@code List<Object>}, numbers {@code Long} when
 * integral and {@code Double} otherwise, strings, booleans and {@code null}. Anything else (trailing
 * text, a bare word, an unescaped control character, a duplicate key, nesting deeper than
 * {@link #MAX_DEPTH}) is refused with a {@link JsonException} naming the offset: the module takes no
 * JSON dependency, and nft's output is read, never guessed at.
 */
final class Json {
    /** nft nests a rule's expressions a dozen levels deep; far more than that is not nft's output. */
    static final int MAX_DEPTH = 256;

    private final String text;
    private int pos;

    private Json(String text) {
        this.text = text;
    }

    static Object parse(String text) {
        Json json = new Json(text);
        json.skipSpace();
        Object value = json.value(0);
        json.skipSpace();
        if (json.pos != text.length()) {
            throw json.error("trailing text");
        }
        return value;
    }

    /** The text is not JSON. */
    static final class JsonException extends IllegalArgumentException {
        JsonException(String message) {
            super(message);
        }
    }

    private Object value(int depth) {
        if (depth > MAX_DEPTH) {
            throw error("nested deeper than " + MAX_DEPTH);
        }
        if (pos >= text.length()) {
            throw error("unexpected end");
        }
        char c = text.charAt(pos);
        switch (c) {
            case '{':
                return object(depth);
            case '[':
                return array(depth);
            case '"':
                return string();
            case 't':
                return literal("true", Boolean.TRUE);
            case 'f':
                return literal("false", Boolean.FALSE);
            case 'n':
                return literal("null", null);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number();
                }
                throw error("unexpected character");
        }
    }

    private Map<String, Object> object(int depth) {
        pos++; // {
        Map<String, Object> out = new LinkedHashMap<>();
        skipSpace();
        if (peek('}')) {
            pos++;
            return Collections.unmodifiableMap(out);
        }
        while (true) {
            skipSpace();
            if (!peek('"')) {
                throw error("expected a member name");
            }
            String key = string();
            skipSpace();
            expect(':');
            skipSpace();
            if (out.containsKey(key)) {
                throw error("duplicate member \"" + key + "\"");
            }
            out.put(key, value(depth + 1));
            skipSpace();
            if (peek(',')) {
                pos++;
            } else if (peek('}')) {
                pos++;
                return Collections.unmodifiableMap(out);
            } else {
                throw error("expected , or }");
            }
        }
    }

    private List<Object> array(int depth) {
        pos++; // [
        List<Object> out = new ArrayList<>();
        skipSpace();
        if (peek(']')) {
            pos++;
            return Collections.unmodifiableList(out);
        }
        while (true) {
            skipSpace();
            out.add(value(depth + 1));
            skipSpace();
            if (peek(',')) {
                pos++;
            } else if (peek(']')) {
                pos++;
                return Collections.unmodifiableList(out);
            } else {
                throw error("expected , or ]");
            }
        }
    }

    private String string() {
        pos++; // opening quote
        StringBuilder sb = new StringBuilder();
        while (true) {
            if (pos >= text.length()) {
                throw error("unterminated string");
            }
            char c = text.charAt(pos++);
            if (c == '"') {
                return sb.toString();
            }
            if (c < 0x20) {
                throw error("control character in string");
            }
            if (c != '\\') {
                sb.append(c);
                continue;
            }
            if (pos >= text.length()) {
                throw error("unterminated escape");
            }
            char e = text.charAt(pos++);
            switch (e) {
                case '"':
                case '\\':
                case '/':
                    sb.append(e);
                    break;
                case 'b':
                    sb.append('\b');
                    break;
                case 'f':
                    sb.append('\f');
                    break;
                case 'n':
                    sb.append('\n');
                    break;
                case 'r':
                    sb.append('\r');
                    break;
                case 't':
                    sb.append('\t');
                    break;
                case 'u':
                    sb.append(unicodeEscape());
                    break;
                default:
                    throw error("bad escape \\" + e);
            }
        }
    }

    private char unicodeEscape() {
        if (pos + 4 > text.length()) {
            throw error("short \\u escape");
        }
        int v = 0;
        for (int i = 0; i < 4; i++) {
            int d = Character.digit(text.charAt(pos + i), 16);
            if (d < 0 || text.charAt(pos + i) > 'f') {
                throw error("bad \\u escape");
            }
            v = v * 16 + d;
        }
        pos += 4;
        return (char) v;
    }

    private Object number() {
        int start = pos;
        if (peek('-')) {
            pos++;
        }
        if (peek('0')) {
            pos++;
        } else if (digitAt(pos)) {
            while (digitAt(pos)) {
                pos++;
            }
        } else {
            throw error("bad number");
        }
        boolean integral = true;
        if (peek('.')) {
            integral = false;
            pos++;
            if (!digitAt(pos)) {
                throw error("bad fraction");
            }
            while (digitAt(pos)) {
                pos++;
            }
        }
        if (peek('e') || peek('E')) {
            integral = false;
            pos++;
            if (peek('+') || peek('-')) {
                pos++;
            }
            if (!digitAt(pos)) {
                throw error("bad exponent");
            }
            while (digitAt(pos)) {
                pos++;
            }
        }
        String n = text.substring(start, pos);
        if (integral) {
            try {
                return Long.parseLong(n);
            } catch (NumberFormatException tooLong) {
                return Double.parseDouble(n);
            }
        }
        return Double.parseDouble(n);
    }

    private Object literal(String word, Object value) {
        if (!text.startsWith(word, pos)) {
            throw error("unexpected word");
        }
        pos += word.length();
        return value;
    }

    private boolean digitAt(int i) {
        return i < text.length() && text.charAt(i) >= '0' && text.charAt(i) <= '9';
    }

    private boolean peek(char c) {
        return pos < text.length() && text.charAt(pos) == c;
    }

    private void expect(char c) {
        if (!peek(c)) {
            throw error("expected " + c);
        }
        pos++;
    }

    private void skipSpace() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }

    private JsonException error(String what) {
        return new JsonException("bad JSON at offset " + pos + ": " + what);
    }
}
