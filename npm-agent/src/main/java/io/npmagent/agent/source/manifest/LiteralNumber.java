package io.npmagent.agent.source.manifest;

import java.math.BigDecimal;
import java.math.BigInteger;

/**
 * A YAML number as written, for Gson. Two things the JSON numbers Gson makes itself get wrong for
 * untrusted manifests:
 * <ul>
 *   <li>Gson narrows a tree number with a cast, so {@code containerPort: 4294967376} would become port
 *       80. Here {@link #intValue()} and {@link #longValue()} throw unless the value is exactly an
 *       integer of that width, as Go's decoder refuses it; Gson reports that as a syntax error.</li>
 *   <li>A number read into a string field (a label {@code version: 1.10}) must keep its text, so
 *       {@link #toString()} is the text as written, not a re-rendering ({@code 1.1}).</li>
 * </ul>
 */
final class LiteralNumber extends Number {
    private static final long serialVersionUID = 1L;

    private final String text;
    private final BigDecimal value;

    private LiteralNumber(String text, BigDecimal value) {
        this.text = text;
        this.value = value;
    }

    /** A YAML 1.2 core-schema int: decimal with optional sign, {@code 0o} octal or {@code 0x} hex. */
    static LiteralNumber ofInt(String text) {
        BigInteger v;
        if (text.startsWith("0x")) {
            v = new BigInteger(text.substring(2), 16);
        } else if (text.startsWith("0o")) {
            v = new BigInteger(text.substring(2), 8);
        } else {
            v = new BigInteger(text.startsWith("+") ? text.substring(1) : text);
        }
        return new LiteralNumber(text, new BigDecimal(v));
    }

    /** A YAML 1.2 core-schema float without the infinities and NaN (which JSON cannot hold). */
    static LiteralNumber ofFloat(String text) {
        return new LiteralNumber(text, new BigDecimal(text.startsWith("+") ? text.substring(1) : text));
    }

    @Override
    public int intValue() {
        try {
            return value.intValueExact();
        } catch (ArithmeticException e) {
            throw new NumberFormatException(text + " is not a 32-bit integer");
        }
    }

    @Override
    public long longValue() {
        try {
            return value.longValueExact();
        } catch (ArithmeticException e) {
            throw new NumberFormatException(text + " is not a 64-bit integer");
        }
    }

    @Override
    public float floatValue() {
        return value.floatValue();
    }

    @Override
    public double doubleValue() {
        return value.doubleValue();
    }

    @Override
    public String toString() {
        return text;
    }
}
