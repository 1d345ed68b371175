package io.npmagent.harness.monitoring;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** What {@link AlertReceiverMain} recorded: every alert of every notification, with when the receiver got it. */
public record AlertLog(List<Received> alerts) {
    /** One alert as one notification carried it: firing or resolved, its labels, when it started, when it reached the receiver. */
    public record Received(Instant receivedAt, String status, Map<String, String> labels, Instant startsAt) {
        public String name() {
            return labels.getOrDefault("alertname", "");
        }
    }

    /** The file's notifications; none when nothing has been received yet. */
    public static AlertLog read(Path file) throws IOException {
        List<Received> out = new ArrayList<>();
        if (!Files.exists(file)) {
            return new AlertLog(out);
        }
        for (String line : Files.readAllLines(file)) {
            if (line.isBlank()) {
                continue;
            }
            JsonObject entry = JsonParser.parseString(line).getAsJsonObject();
            Instant received = Instant.parse(entry.get("receivedAt").getAsString());
            for (JsonElement a : entry.getAsJsonObject("notification").getAsJsonArray("alerts")) {
                JsonObject alert = a.getAsJsonObject();
                Map<String, String> labels = new LinkedHashMap<>();
                alert.getAsJsonObject("labels").entrySet().forEach(e -> labels.put(e.getKey(), e.getValue().getAsString()));
                out.add(new Received(received, alert.get("status").getAsString(), labels, Instant.parse(alert.get("startsAt").getAsString())));
            }
        }
        return new AlertLog(out);
    }

    /** The first time the receiver got {@code alert} in {@code status} (firing, resolved) with the label {@code key=value}, after {@code since}. */
    public Optional<Received> first(String alert, String status, String key, String value, Instant since) {
        return alerts.stream()
                .filter(r -> r.name().equals(alert) && r.status().equals(status) && value.equals(r.labels().get(key)) && !r.receivedAt().isBefore(since))
                .findFirst();
    }
}
