package io.npmagent.pipelines.swarm;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.npmagent.pipelines.scale.AgentProcess;
import io.npmagent.pipelines.scale.ScaleCluster;
import io.npmagent.pipelines.scale.ScaleNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The real agent's event → enforced time while a profile runs: once a second the probe policy flips
 * between admitting the probe client and admitting no one, and packets between the two probe pods on the
 * agent's node time, from the API server's acknowledgement of the write, until the connects answer the
 * new way (the scale pipeline's measure, {@code AgentScaleRun}).
 */
final class ProbeFlips implements AutoCloseable {
    private static final Duration LIMIT = Duration.ofSeconds(30);
    private final KubernetesClient admin;
    private final ScaleNode node;
    private final AgentProcess agent;
    private final List<Double> seconds = new ArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile String failure;
    private boolean open = true;

    ProbeFlips(KubernetesClient admin, ScaleNode node, AgentProcess agent) {
        this.admin = admin;
        this.node = node;
        this.agent = agent;
        this.thread = new Thread(this::loop, "swarm-probe-flips");
        thread.setDaemon(true);
        thread.start();
    }

    private void loop() {
        try {
            while (running) {
                long next = System.nanoTime() + 1_000_000_000L;
                open = !open;
                admin.resource(ScaleCluster.probePolicy(open)).update();
                long t0 = System.nanoTime();
                while (node.connects(ScaleCluster.SERVER_IP, Duration.ofMillis(20)) != open) {
                    if (System.nanoTime() - t0 > LIMIT.toNanos() || !agent.alive()) {
                        failure = "the probe policy's flip to " + (open ? "open" : "closed") + " was not enforced in " + LIMIT.toSeconds()
                                + " s\n" + agent.logTail();
                        return;
                    }
                }
                synchronized (seconds) {
                    seconds.add((System.nanoTime() - t0) / 1e9);
                }
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            failure = e.toString();
        }
    }

    /** Stops flipping (leaving the probe open) and returns the flips' times; fails if a flip was not enforced. */
    List<Double> stop() throws InterruptedException {
        running = false;
        thread.join(LIMIT.toMillis() + 5_000);
        if (failure != null) {
            throw new IllegalStateException(failure);
        }
        if (!open) {
            admin.resource(ScaleCluster.probePolicy(true)).update();
        }
        synchronized (seconds) {
            return List.copyOf(seconds);
        }
    }

    @Override
    public void close() {
        running = false;
        try {
            thread.join(LIMIT.toMillis() + 5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
