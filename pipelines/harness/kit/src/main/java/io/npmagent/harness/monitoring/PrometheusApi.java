package io.npmagent.harness.monitoring;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** Prometheus' HTTP API (v1), as Grafana and promtool use it: instant and range queries, readiness. */
public final class PrometheusApi {
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final URI base;

    /** The Prometheus at {@code base} (http://127.0.0.1:PORT). */
    public PrometheusApi(URI base) {
        this.base = base;
    }

    public URI base() {
        return base;
    }

    /** Whether it answers /-/ready (its rules and storage loaded). */
    public boolean ready() {
        try {
            return get("/-/ready").statusCode() == 200;
        } catch (IOException e) {
            return false;
        }
    }

    /** An instant query's series: each {@code {"metric": {...}, "value": [t, "v"]}}. */
    public List<JsonObject> query(String expr) throws IOException {
        return series(data("/api/v1/query?query=" + encode(expr)));
    }

    /**
     * A range query's series from {@code start} to {@code end} every {@code step}, as a dashboard panel over that
     * time range asks: each {@code {"metric": {...}, "values": [[t, "v"], ...]}}.
     */
    public List<JsonObject> queryRange(String expr, Instant start, Instant end, Duration step) throws IOException {
        return series(data("/api/v1/query_range?query=" + encode(expr) + "&start=" + start.getEpochSecond() + "&end=" + end.getEpochSecond()
                + "&step=" + step.toSeconds()));
    }

    private JsonElement data(String path) throws IOException {
        HttpResponse<String> r = get(path);
        JsonObject body;
        try {
            body = JsonParser.parseString(r.body()).getAsJsonObject();
        } catch (RuntimeException e) {
            throw new IOException(base + path + ": HTTP " + r.statusCode() + ", not JSON: " + r.body().lines().findFirst().orElse(""));
        }
        if (!"success".equals(body.get("status").getAsString())) {
            throw new IOException(base + path + ": " + body.get("errorType") + ": " + body.get("error"));
        }
        return body.get("data");
    }

    private static List<JsonObject> series(JsonElement data) {
        List<JsonObject> out = new ArrayList<>();
        JsonElement result = data.getAsJsonObject().get("result");
        if (result.isJsonArray()) {
            result.getAsJsonArray().forEach(s -> out.add(s.getAsJsonObject()));
        }
        return out;
    }

    private HttpResponse<String> get(String path) throws IOException {
        try {
            return http.send(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(30)).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted: " + base + path, e);
        }
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
