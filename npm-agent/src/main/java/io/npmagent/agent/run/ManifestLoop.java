package io.npmagent.agent.run;

import io.npmagent.agent.source.manifest.ManifestDirectory;
import io.npmagent.dataplane.model.ApiSyntax;
import io.npmagent.dataplane.model.ClusterState;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * The model thread of an agent fed by a manifest directory: it polls the directory, hands each new
 * snapshot to the agent (after the optional {@code prepare} step, which the sandbox uses to give pods
 * addresses and to build them), and tracks convergence, which it writes to the state directory as
 * {@link AgentStatus} with the metrics beside it ({@code metrics.prom}).
 */
public final class ManifestLoop {
    private static final System.Logger LOG = System.getLogger(ManifestLoop.class.getName());
    public static final String METRICS_FILE = "metrics.prom";

    private final ManifestDirectory dir;
    private final Agent agent;
    private final Path stateDir;
    private final UnaryOperator<ClusterState> enrich;
    private final Consumer<ClusterState> prepare;
    private volatile boolean stopped;
    private final CountDownLatch finished = new CountDownLatch(1);

    private long seenGeneration;
    private String seenHash = "";
    private long appliedGeneration;
    private String appliedHash = "";
    private String podsHash = "";
    private List<String> problems = List.of();
    private AgentStatus lastWritten;
    /** The status as of the last step, for readers on other threads (the HTTP endpoints). */
    private volatile AgentStatus latest;
    private Instant lastMetrics = Instant.EPOCH;

    /**
     * @param stateDir where to write status and metrics (null: nowhere)
     * @param enrich   what to do to each snapshot first (the sandbox assigns missing pod addresses)
     * @param prepare  what must happen before the agent gets a snapshot (the sandbox builds its pods)
     */
    public ManifestLoop(ManifestDirectory dir, Agent agent, Path stateDir, UnaryOperator<ClusterState> enrich,
            Consumer<ClusterState> prepare) {
        this.dir = dir;
        this.agent = agent;
        this.stateDir = stateDir;
        this.enrich = enrich;
        this.prepare = prepare;
    }

    /** Polls until {@link #stop}, then closes the agent (its queue flushes what is due). */
    public void run(Duration poll) {
        try {
            while (!stopped) {
                step();
                try {
                    Thread.sleep(poll.toMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            step();
        } finally {
            agent.close();
            finished.countDown();
        }
    }

    /**
     * Asks the loop to stop and waits (at most {@code wait}) until it has, for a shutdown hook: the JVM
     * must not exit halfway through a kernel write. The caller must not be the loop's own thread.
     */
    public void stop(Duration wait) {
        stopped = true;
        try {
            finished.await(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops the loop from a shutdown signal. */
    public void stopOnShutdown() {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(Duration.ofSeconds(10)), "npm-agent-stop"));
    }

    /** One poll: read the directory if it changed, apply it, note convergence. */
    public void step() {
        try {
            ManifestDirectory.Snapshot snapshot = dir.scan();
            if (snapshot != null) {
                seenGeneration++;
                seenHash = snapshot.hash();
                problems = new ArrayList<>(snapshot.problems());
                ClusterState state = enrich.apply(snapshot.state());
                prepare.accept(state);
                podsHash = snapshot.hash();
                agent.apply(state);
                LOG.log(System.Logger.Level.INFO, "generation {0} ({1}): {2} namespaces, {3} pods, {4} policies",
                        seenGeneration, seenHash, state.namespaces().size(), state.pods().size(), state.policies().size());
            }
        } catch (IOException | RuntimeException e) {
            // The directory is unreadable for now (or the kernel refused us): say so and try again next poll.
            problems = List.of("cannot read " + ApiSyntax.escapeControls(dir.dir().toString()) + ": " + e.getMessage());
            LOG.log(System.Logger.Level.WARNING, "manifest poll failed", e);
        }
        if (agent.converged() && !appliedHash.equals(seenHash)) {
            appliedHash = seenHash;
            appliedGeneration = seenGeneration;
            LOG.log(System.Logger.Level.INFO, "generation {0} ({1}) is in the kernel", appliedGeneration, appliedHash);
        }
        writeStatus();
    }

    public AgentStatus status() {
        List<String> all = new ArrayList<>(problems);
        all.addAll(agent.problems());
        return new AgentStatus(agent.backendName(), agent.backendReason(), seenHash, seenGeneration, appliedHash, appliedGeneration, podsHash,
                agent.policies(), agent.failures(), all, Instant.now().toString());
    }

    /** The status as of the last poll, null before the first: safe from any thread (the model is only touched by the loop). */
    public AgentStatus latest() {
        return latest;
    }

    private void writeStatus() {
        AgentStatus now = status();
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
                Path tmp = stateDir.resolve(METRICS_FILE + ".tmp");
                Files.writeString(tmp, agent.metricsText(), StandardCharsets.UTF_8);
                Files.move(tmp, stateDir.resolve(METRICS_FILE), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
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
