package io.npmagent.harness.monitoring;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The receiver's record read back: each alert of each notification (Alertmanager's webhook body, version 4), found by name, status and label. */
class AlertLogTest {
    @TempDir
    Path dir;

    @Test
    void theFirstNotificationOfAnAlertInAStatusOnANode() throws Exception {
        Path file = Files.writeString(dir.resolve("alerts.jsonl"), line("2026-12-06T10:00:00Z", "firing", "NpmAgentDown", "npm-node-2")
                + line("2026-12-06T10:06:00Z", "resolved", "NpmAgentDown", "npm-node-2")
                + "\n"
                + line("2026-12-06T10:07:00Z", "firing", "NpmAgentDown", "npm-node-1"));
        AlertLog log = AlertLog.read(file);
        assertThat(log.alerts()).hasSize(3);
        Instant since = Instant.parse("2026-12-06T09:00:00Z");
        assertThat(log.first("NpmAgentDown", "resolved", "node", "npm-node-2", since)).hasValueSatisfying(r ->
                assertThat(r.receivedAt()).isEqualTo(Instant.parse("2026-12-06T10:06:00Z")));
        assertThat(log.first("NpmAgentDown", "firing", "node", "npm-node-1", since)).isPresent();
        assertThat(log.first("NpmAgentDown", "firing", "node", "npm-node-2", Instant.parse("2026-12-06T10:01:00Z"))).as("before since").isEmpty();
        assertThat(log.first("NpmAgentApplyFailing", "firing", "node", "npm-node-2", since)).isEmpty();
    }

    @Test
    void nothingReceivedYetIsAnEmptyLog() throws Exception {
        assertThat(AlertLog.read(dir.resolve("none.jsonl")).alerts()).isEmpty();
    }

    private static String line(String at, String status, String alert, String node) {
        return "{\"receivedAt\":\"" + at + "\",\"notification\":{\"version\":\"4\",\"status\":\"" + status + "\",\"alerts\":[{\"status\":\"" + status
                + "\",\"labels\":{\"alertname\":\"" + alert + "\",\"node\":\"" + node + "\"},\"startsAt\":\"2026-12-06T09:59:00Z\"}]}}\n";
    }
}
