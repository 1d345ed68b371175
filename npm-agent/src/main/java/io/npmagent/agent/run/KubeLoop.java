package io.npmagent.agent.run;

import io.npmagent.agent.source.k8s.ObjectChange;
import io.npmagent.agent.source.k8s.KubeSource;
import io.npmagent.agent.source.k8s.StateDigest;
import io.npmagent.dataplane.model.ClusterEvent;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The model thread of an agent fed by the API server. It starts the informers and applies nothing until
 * all three caches have synced; then the whole cluster goes to the agent as one batch (which the backend
 * adopts), and from then on every informer event, in order. A relist after a dropped watch or a server
 * restart arrives as ordinary events, so the dataplane converges through the same path.
 *
 * <p>Generations here count what the loop has taken from the informers: 1 is the synced caches, and each
 * later drain of the event queue is one more. {@link AgentStatus#appliedGeneration()} is the last one
 * whose state is in the kernel. The status's hashes are {@link StateDigest}s of the object versions
 * taken ({@code seenHash}) and of those whose state is in the kernel ({@code appliedHash}): a tool that
 * lists the server and gets the same digest knows the agent enforces what the server holds.
 */
public final class KubeLoop implements ModelLoop {
    private static final System.Logger LOG = System.getLogger(KubeLoop.class.getName());
    static final String WAITING = "waiting for the informer caches (namespaces, pods, networkpolicies) to sync: nothing is applied before";
    /** How many events one step takes at most, so status and convergence are noted during a flood. */
    private static final int DRAIN = 10_000;

    private final KubeSource source;
    private final Agent agent;
    private final StatusReport report;
    private final List<Runnable> afterStep = new ArrayList<>();
    private final LoopStop stop = new LoopStop();
    private final StateDigest digest = new StateDigest();
    private boolean synced;
    private long seen;
    private long applied;
    private String seenDigest = "";
    private String appliedDigest = "";

    /** @param stateDir where to write status and metrics (null: nowhere) */
    public KubeLoop(KubeSource source, Agent agent, Path stateDir) {
        this.source = source;
        this.agent = agent;
        this.report = new StatusReport(stateDir, agent::metricsText);
    }

    /** Something to run on the model thread after each step (the policy event recorder). */
    public KubeLoop afterEachStep(Runnable r) {
        afterStep.add(r);
        return this;
    }

    /** Runs until {@link #stop}, then stops the informers and closes the agent (its queue flushes what is due). */
    @Override
    public void run(Duration poll) {
        try {
            long t0 = System.nanoTime();
            source.start();
            while (!stop.requested() && !source.synced()) {
                report.publish(status());
                Thread.sleep(Math.min(poll.toMillis(), 100));
            }
            if (stop.requested()) {
                return;
            }
            agent.noteListed((System.nanoTime() - t0) / 1e9);
            startWhole();
            synced = true;
            seen = 1;
            LOG.log(System.Logger.Level.INFO, "caches synced: {0}; the whole state went to the backend as one batch", source.counts());
            step(Duration.ZERO);
            while (!stop.requested()) {
                step(poll);
            }
            step(Duration.ZERO);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            source.close();
            agent.close();
            stop.finished();
        }
    }

    /**
     * The whole state to the agent, in a method of its own: a list local to {@link #run} would stay
     * reachable for the agent's life (the interpreter keeps a frame's locals), and at 100,000 pods it
     * holds every pod's event.
     */
    private void startWhole() {
        agent.start(take(source.wholeStateThenEvents()));
    }

    /** Waits up to {@code wait} for events, applies every one waiting (up to a drain's worth), notes convergence. */
    private void step(Duration wait) throws InterruptedException {
        ObjectChange first = wait.isZero() ? source.events().poll() : source.events().poll(wait.toMillis(), TimeUnit.MILLISECONDS);
        if (first != null) {
            List<ObjectChange> batch = new ArrayList<>();
            batch.add(first);
            source.events().drainTo(batch, DRAIN - 1);
            take(batch).forEach(agent::update);
            seen++;
        }
        agent.noteBacklog(source.events().size());
        if (agent.converged()) {
            applied = seen;
            appliedDigest = seenDigest;
        }
        afterStep.forEach(Runnable::run);
        report.publish(status());
    }

    public AgentStatus status() {
        List<String> problems = new ArrayList<>();
        if (!synced) {
            problems.add(WAITING);
        }
        problems.addAll(source.problems());
        problems.addAll(agent.problems());
        return new AgentStatus(agent.backendName(), agent.backendReason(), seenDigest, seen, appliedDigest,
                applied, "", synced ? agent.policies() : 0, agent.failures(), problems, source.denied(), Instant.now().toString());
    }

    /** The model's events of {@code changes}, after counting every change into the digest. */
    private List<ClusterEvent> take(List<ObjectChange> changes) {
        List<ClusterEvent> events = new ArrayList<>(changes.size());
        for (ObjectChange c : changes) {
            digest.take(c);
            if (c.event() != null) {
                events.add(c.event());
            }
        }
        seenDigest = digest.value();
        return events;
    }

    /** The status as of the last step, null before the first: safe from any thread. */
    @Override
    public void stop(Duration wait) {
        stop.stop(wait);
    }

    @Override
    public AgentStatus latest() {
        return report.latest();
    }



}
