package io.npmagent.agent.flows;

import io.npmagent.dataplane.flow.FlowFilter;
import io.npmagent.dataplane.flow.FlowVerdict;
import io.npmagent.dataplane.model.ApiSyntax;
import io.npmagent.dataplane.model.PodKey;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a reader of {@code /debug/flows} asks for: the filter ({@code verdict}, {@code pod}, {@code namespace},
 * {@code policy}, {@code since}), the {@code output} ({@code text} or {@code json}) and whether to {@code follow}.
 * A bad parameter is refused with a message naming it ({@link Bad}); so is a parameter this endpoint does not
 * know, so a typo never widens the answer silently.
 */
public record FlowQuery(FlowFilter filter, boolean json, boolean follow) {
    static final Set<String> PARAMETERS = Set.of("verdict", "pod", "namespace", "policy", "since", "output", "follow");
    private static final Pattern DURATION = Pattern.compile("(?:(\\d+)d)?(?:(\\d+)h)?(?:(\\d+)m)?(?:(\\d+)s)?");

    /** A parameter that cannot be used; the message names it. */
    public static final class Bad extends Exception {
        private static final long serialVersionUID = 1L;

        Bad(String parameter, String problem) {
            super(parameter + ": " + problem);
        }
    }

    /** Reads a raw query string ({@code verdict=denied&since=5m}); null or empty: everything, as text. */
    public static FlowQuery parse(String rawQuery, Instant now) throws Bad {
        Map<String, String> p = parameters(rawQuery);
        FlowVerdict verdict = null;
        if (p.containsKey("verdict")) {
            verdict = switch (p.get("verdict").toLowerCase(Locale.ROOT)) {
                case "allowed" -> FlowVerdict.ALLOWED;
                case "denied" -> FlowVerdict.DENIED;
                default -> throw new Bad("verdict", "allowed or denied, not " + ApiSyntax.quote(p.get("verdict")));
            };
        }
        PodKey pod = null;
        if (p.containsKey("pod")) {
            try {
                pod = PodKey.parse(p.get("pod"));
            } catch (IllegalArgumentException e) {
                throw new Bad("pod", "NAMESPACE/NAME, not " + ApiSyntax.quote(p.get("pod")));
            }
        }
        String namespace = nonEmpty(p, "namespace");
        String policy = nonEmpty(p, "policy");
        Instant since = p.containsKey("since") ? since(p.get("since"), now) : null;
        String output = p.getOrDefault("output", "text");
        if (!output.equals("text") && !output.equals("json")) {
            throw new Bad("output", "text or json, not " + ApiSyntax.quote(output));
        }
        boolean follow = false;
        if (p.containsKey("follow")) {
            follow = switch (p.get("follow")) {
                case "", "true", "1" -> true;
                case "false", "0" -> false;
                default -> throw new Bad("follow", "true or false, not " + ApiSyntax.quote(p.get("follow")));
            };
        }
        return new FlowQuery(new FlowFilter(verdict, pod, namespace, policy, since), output.equals("json"), follow);
    }

    /**
     * An instant ({@code 2026-12-07T00:40:00Z}) or a duration before {@code now}: {@code 30s}, {@code 5m}, {@code 2h},
     * {@code 1d}, or together ({@code 1h30m}).
     */
    public static Instant since(String text, Instant now) throws Bad {
        Matcher m = DURATION.matcher(text);
        if (!text.isEmpty() && m.matches()) {
            Duration d = Duration.ZERO;
            long[] seconds = {86_400, 3_600, 60, 1};
            for (int i = 0; i < 4; i++) {
                if (m.group(i + 1) != null) {
                    try {
                        d = d.plusSeconds(Math.multiplyExact(Long.parseLong(m.group(i + 1)), seconds[i]));
                    } catch (NumberFormatException | ArithmeticException e) {
                        throw new Bad("since", "a duration too long: " + ApiSyntax.quote(text));
                    }
                }
            }
            return now.minus(d);
        }
        try {
            return Instant.parse(text);
        } catch (DateTimeParseException e) {
            throw new Bad("since", "an instant (2026-12-07T00:40:00Z) or a duration (30s, 5m, 2h, 1d, 1h30m), not " + ApiSyntax.quote(text));
        }
    }

    private static String nonEmpty(Map<String, String> p, String name) throws Bad {
        if (!p.containsKey(name)) {
            return null;
        }
        if (p.get(name).isBlank()) {
            throw new Bad(name, "empty");
        }
        return p.get(name);
    }

    private static Map<String, String> parameters(String rawQuery) throws Bad {
        Map<String, String> out = new LinkedHashMap<>();
        if (rawQuery == null || rawQuery.isEmpty()) {
            return out;
        }
        for (String pair : rawQuery.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String name;
            String value;
            try {
                name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
                value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                throw new Bad(ApiSyntax.quote(pair), "not URL-encoded properly");
            }
            if (!PARAMETERS.contains(name)) {
                throw new Bad(ApiSyntax.quote(name), "unknown parameter (verdict, pod, namespace, policy, since, output, follow)");
            }
            if (out.put(name, value) != null) {
                throw new Bad(name, "given twice");
            }
        }
        return out;
    }
}
