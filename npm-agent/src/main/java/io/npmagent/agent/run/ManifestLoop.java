package io.npmagent.agent.run;

import io.npmagent.agent.source.manifest.ManifestDirectory;
import io.npmagent.dataplane.model.ApiSyntax;
import io.npmagent.dataplane.model.ClusterState;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * The model thread of an agent fed by a manifest directory: it polls the directory, hands each new
 * snapshot to the agent (after the optional {@code prepare} step, which the sandbox uses to give pods
 * addresses and to build them), and tracks convergence, which it writes to the state directory as
 * {@link AgentStatus} with the metrics beside it ({@code metrics.prom}).
 */
public final class ManifestLoop implements ModelLoop {
    private static final System.Logger LOG = System.getLogger(ManifestLoop.class.getName());
    public static final String METRICS_FILE = "metrics.prom";

    private final ManifestDirectory dir;
    private final Agent agent;
    private final UnaryOperator<ClusterState> enrich;
    private final Consumer<ClusterState> prepare;
    private final LoopStop stop = new LoopStop();

    private long seenGeneration;
    private String seenHash = "";
    private long appliedGeneration;
    private String appliedHash = "";
    private String podsHash = "";
    private List<String> problems = List.of();
    private final StatusReport report;

    /**
     * @param stateDir where to write status and metrics (null: nowhere)
     * @param enrich   what to do to each snapshot first (the sandbox assigns missing pod addresses)
     * @param prepare  what must happen before the agent gets a snapshot (the sandbox builds its pods)
     */
    public ManifestLoop(ManifestDirectory dir, Agent agent, Path stateDir, UnaryOperator<ClusterState> enrich,
            Consumer<ClusterState> prepare) {
        this.dir = dir;
        this.agent = agent;
        this.report = new StatusReport(stateDir, agent::metricsText);
        this.enrich = enrich;
        this.prepare = prepare;
    }

    /** Polls until {@link #stop}, then closes the agent (its queue flushes what is due). */
    @Override
    public void run(Duration poll) {
        try {
            while (!stop.requested()) {
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
            stop.finished();
        }
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
                agent.policies(), agent.failures(), all, List.of(), Instant.now().toString());
    }

    /** The status as of the last poll, null before the first: safe from any thread (the model is only touched by the loop). */
    @Override
    public void stop(Duration wait) {
        stop.stop(wait);
    }

    @Override
    public AgentStatus latest() {
        return report.latest();
    }

    private void writeStatus() {
        report.publish(status());
    }
}
