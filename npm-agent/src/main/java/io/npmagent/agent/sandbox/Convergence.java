package io.npmagent.agent.sandbox;

import io.npmagent.agent.run.AgentStatus;
import io.npmagent.agent.source.manifest.ManifestDirectory;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;

/**
 * Waiting for a sandbox to have the manifest directory as it is now: pods built and the agent's state in
 * the kernel, both for the directory's current generation (its content hash).
 */
public final class Convergence {
    private Convergence() {}

    /** The sandbox did not converge in time, or its agent is gone; the message says what it was doing. */
    public static final class NotConverged extends Exception {
        private static final long serialVersionUID = 1L;

        NotConverged(String message) {
            super(message);
        }
    }

    public static AgentStatus await(Sandbox sandbox, Duration timeout) throws IOException, NotConverged {
        Sandbox.Spec spec = sandbox.spec();
        Instant deadline = Instant.now().plus(timeout);
        while (true) {
            String hash = ManifestDirectory.hash(Path.of(spec.manifests()));
            AgentStatus status = AgentStatus.read(sandbox.dir());
            if (status != null && hash.equals(status.appliedHash()) && hash.equals(status.podsHash())) {
                return status;
            }
            if (!ProcessHandle.of(spec.daemonPid()).map(ProcessHandle::isAlive).orElse(false)) {
                throw new NotConverged("the agent of sandbox " + sandbox.name() + " is not running; its log is "
                        + sandbox.dir().resolve("agent.log") + " (npm-agent sandbox down --name " + sandbox.name() + " cleans up)");
            }
            if (Instant.now().isAfter(deadline)) {
                throw new NotConverged("sandbox " + sandbox.name() + " has not applied " + spec.manifests() + " (generation "
                        + hash + ") within " + timeout.toSeconds() + " s: " + describe(status));
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new NotConverged("interrupted");
            }
        }
    }

    private static String describe(AgentStatus s) {
        if (s == null) {
            return "the agent has reported nothing yet";
        }
        return "the agent has seen generation " + s.seenGeneration() + " (" + s.seenHash() + "), has "
                + (s.appliedHash().isEmpty() ? "applied nothing" : "applied generation " + s.appliedGeneration() + " (" + s.appliedHash() + ")")
                + (s.failures().isEmpty() ? "" : "; refused: " + String.join("; ", s.failures()))
                + (s.problems().isEmpty() ? "" : "; problems: " + String.join("; ", s.problems()));
    }
}
