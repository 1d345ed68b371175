package io.npmagent.harness.monitoring;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The PromQL a Grafana dashboard's panels ask, with its variables filled in as Grafana would before sending them to
 * Prometheus; no Grafana needed (its licence rules it out here). A variable left without a value is an error naming
 * the panel, so a query is never sent half-written.
 */
public final class DashboardQueries {
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{?(\\w+)}?");

    /** One query of one panel: the panel's title, the target's refId, the expression with its variables filled in. */
    public record Query(String panel, String refId, String expr) {
        @Override
        public String toString() {
            return "\"" + panel + "\" " + refId;
        }
    }

    /** A query's answer over a time range: how many series it returned. */
    public record Answer(Query query, int series) {}

    /**
     * Grafana's values for the shipped dashboard over a time range: every agent ({@code $instance} is "All",
     * {@code .*}), and a rate window of four scrapes ({@code $__rate_interval}: Grafana's is at least four scrape
     * intervals).
     */
    public static final Map<String, String> ALL_AGENTS = Map.of("instance", ".*", "__rate_interval", "2m");
    /** The range queries' resolution: one point a scrape. */
    public static final java.time.Duration STEP = java.time.Duration.ofSeconds(30);

    private DashboardQueries() {}

    /** Each query of {@code dashboard} as a panel over {@code from}..{@code to} asks it of {@code prometheus}, all agents. */
    public static List<Answer> ask(PrometheusApi prometheus, Path dashboard, java.time.Instant from, java.time.Instant to) throws IOException {
        List<Answer> out = new ArrayList<>();
        for (Query q : of(dashboard, ALL_AGENTS)) {
            out.add(new Answer(q, prometheus.queryRange(q.expr(), from, to, STEP).size()));
        }
        return out;
    }

    /** Every panel's every target (rows' panels included), {@code variables} (name without the $) filled in. */
    public static List<Query> of(Path dashboard, Map<String, String> variables) throws IOException {
        JsonObject root = JsonParser.parseString(Files.readString(dashboard)).getAsJsonObject();
        List<Query> out = new ArrayList<>();
        collect(root, variables, out);
        return out;
    }

    private static void collect(JsonObject holder, Map<String, String> variables, List<Query> out) {
        if (!holder.has("panels")) {
            return;
        }
        for (JsonElement p : holder.getAsJsonArray("panels")) {
            JsonObject panel = p.getAsJsonObject();
            String title = panel.has("title") ? panel.get("title").getAsString() : "(untitled)";
            if (panel.has("targets")) {
                for (JsonElement t : panel.getAsJsonArray("targets")) {
                    JsonObject target = t.getAsJsonObject();
                    if (target.has("expr")) {
                        String refId = target.has("refId") ? target.get("refId").getAsString() : "?";
                        out.add(new Query(title, refId, fill(target.get("expr").getAsString(), variables, title + " " + refId)));
                    }
                }
            }
            collect(panel, variables, out);
        }
    }

    static String fill(String expr, Map<String, String> variables, String where) {
        Matcher m = VARIABLE.matcher(expr);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            String value = variables.get(m.group(1));
            if (value == null) {
                throw new IllegalArgumentException(where + ": no value for the variable $" + m.group(1) + " in " + expr);
            }
            m.appendReplacement(sb, Matcher.quoteReplacement(value));
        }
        m.appendTail(sb);
        return sb.toString();
    }
}
