package io.npmagent.agent.run;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.function.Supplier;

/**
 * Where a model thread publishes its {@link AgentStatus}: {@link #latest} for other threads (the HTTP
 * endpoints), and, with a state directory, {@code status.json} when it changes and {@code metrics.prom}
 * at most once a second.
 */
final class StatusReport {
    private static final System.Logger LOG = System.getLogger(StatusReport.class.getName());

    private final Path stateDir;
    private final Supplier<String> metricsText;
    private AgentStatus lastWritten;
    private volatile AgentStatus latest;
    private Instant lastMetrics = Instant.EPOCH;

    /** @param stateDir where to write (null: nowhere) */
    StatusReport(Path stateDir, Supplier<String> metricsText) {
        this.stateDir = stateDir;
        this.metricsText = metricsText;
    }

    AgentStatus latest() {
        return latest;
    }

    void publish(AgentStatus now) {
        latest = now;
        if (stateDir == null) {
            return;
        }
        try {
            if (lastWritten == null || !sameButTime(now, lastWritten)) {
                now.write(stateDir);
                lastWritten = now;
            }
            if (Instant.now().isAfter(lastMetrics.plusSeconds(1))) {
                Path tmp = stateDir.resolve(ManifestLoop.METRICS_FILE + ".tmp");
                Files.writeString(tmp, metricsText.get(), StandardCharsets.UTF_8);
                Files.move(tmp, stateDir.resolve(ManifestLoop.METRICS_FILE), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                lastMetrics = Instant.now();
            }
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot write the status to " + stateDir, e);
        }
    }

    private static boolean sameButTime(AgentStatus a, AgentStatus b) {
        return a.seenHash().equals(b.seenHash()) && a.appliedHash().equals(b.appliedHash()) && a.podsHash().equals(b.podsHash())
                && a.policies() == b.policies() && a.failures().equals(b.failures()) && a.problems().equals(b.problems());
    }
}
