package io.npmagent.dataplane.bandwidth;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Kubernetes resource quantity ({@code k8s.io/apimachinery/pkg/api/resource}), read exactly: a
 * signed decimal number, then a binary suffix (Ki .. Ei), a decimal suffix (m, k, M, G, T, P, E) or a
 * decimal exponent ({@code e3}, {@code E-2}). Arithmetic is BigDecimal throughout: {@code 0.1M} is
 * exactly 100000, never 99999.99.
 */
public final class Quantity {
    // "E" alone is exa; "E" followed by a signed integer is an exponent, as in Kubernetes' parser.
    private static final Pattern SYNTAX = Pattern.compile(
            "([+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?");
    private static final Map<String, BigDecimal> SUFFIXES = Map.ofEntries(
            Map.entry("Ki", BigDecimal.valueOf(1L << 10)),
            Map.entry("Mi", BigDecimal.valueOf(1L << 20)),
            Map.entry("Gi", BigDecimal.valueOf(1L << 30)),
            Map.entry("Ti", BigDecimal.valueOf(1L << 40)),
            Map.entry("Pi", BigDecimal.valueOf(1L << 50)),
            Map.entry("Ei", BigDecimal.valueOf(1L << 60)),
            Map.entry("m", BigDecimal.ONE.scaleByPowerOfTen(-3)),
            Map.entry("k", BigDecimal.ONE.scaleByPowerOfTen(3)),
            Map.entry("M", BigDecimal.ONE.scaleByPowerOfTen(6)),
            Map.entry("G", BigDecimal.ONE.scaleByPowerOfTen(9)),
            Map.entry("T", BigDecimal.ONE.scaleByPowerOfTen(12)),
            Map.entry("P", BigDecimal.ONE.scaleByPowerOfTen(15)),
            Map.entry("E", BigDecimal.ONE.scaleByPowerOfTen(18)));
    /** Beyond this an exponent cannot name a bandwidth; it also keeps BigDecimal's scale an int. */
    private static final BigInteger EXPONENT_LIMIT = BigInteger.valueOf(100_000);

    private Quantity() {}

    /**
     * The exact value of {@code text}.
     *
     * @throws IllegalArgumentException naming what is wrong with it
     */
    public static BigDecimal parse(String text) {
        Matcher m = SYNTAX.matcher(text);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a quantity (a number with an optional suffix such as k, M, Gi or e6)");
        }
        BigDecimal number = new BigDecimal(m.group(1));
        String suffix = m.group(2);
        if (suffix == null) {
            return number;
        }
        BigDecimal multiplier = SUFFIXES.get(suffix);
        if (multiplier != null) {
            return number.multiply(multiplier);
        }
        BigInteger exponent = new BigInteger(suffix.substring(1).replace("+", ""));
        if (exponent.abs().compareTo(EXPONENT_LIMIT) > 0) {
            throw new IllegalArgumentException("out of range (exponent " + exponent + ")");
        }
        return number.scaleByPowerOfTen(exponent.intValueExact());
    }
}
