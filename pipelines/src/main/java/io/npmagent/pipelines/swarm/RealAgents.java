package io.npmagent.pipelines.swarm;

import io.npmagent.pipelines.bench.BenchApiServer;
import io.npmagent.pipelines.bench.TempDir;
import io.npmagent.pipelines.scale.AgentProcess;
import io.npmagent.pipelines.scale.QueueMode;
import io.npmagent.pipelines.scale.ScaleCluster;
import io.npmagent.pipelines.scale.ScaleNode;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Real agents for the swarm's calibration: {@code npm-agent run} each for its own Node ({@code node-2}
 * ...), on a node of network namespaces and a bpffs of its own, as {@code AgentProcess} runs the measured
 * one. Against these the watchers' cost to the API server is checked. A pause is SIGSTOP: the JVM stops
 * reading, as in a long GC pause.
 */
final class RealAgents implements Fleet {
    private final BenchApiServer api;
    private final int count;
    private final String backend;
    private final Path logs;
    private final List<ScaleNode> nodes = new ArrayList<>();
    private final List<AgentProcess> agents = new ArrayList<>();
    private final List<TempDir> dirs = new ArrayList<>();

    RealAgents(BenchApiServer api, int count, String backend, Path logs) {
        this.api = api;
        this.count = count;
        this.backend = backend;
        this.logs = logs;
    }

    @Override
    public int size() {
        return count;
    }

    @Override
    public Duration startAll(Duration limit) throws IOException {
        long t0 = System.nanoTime();
        for (int i = 0; i < count; i++) {
            if (nodes.size() <= i) {
                nodes.add(new ScaleNode("swr" + i + "-" + ProcessHandle.current().pid() % 10000, List.of(), ScaleCluster.CLIENT_IP,
                        ScaleCluster.SERVER_IP));
                dirs.add(TempDir.create("npm-swarm-agent-"));
            }
            agents.add(start(i));
        }
        awaitReady(agents, limit);
        return Duration.ofNanos(System.nanoTime() - t0);
    }

    private AgentProcess start(int i) throws IOException {
        ScaleNode n = nodes.get(i);
        return new AgentProcess(dirs.get(i).path(), logs, "calibration-agent-" + (i + 2), api.agentKubeconfig(), "node-" + (i + 2), n.netns(), n.bpffs(),
                backend, QueueMode.ADAPTIVE.settings, AgentProcess.DAEMONSET_JVM);
    }

    private static void awaitReady(List<AgentProcess> batch, Duration limit) {
        for (AgentProcess a : batch) {
            a.await(a::ready, limit, "a calibration agent's /readyz");
        }
    }

    @Override
    public Duration restartAll(Duration limit) throws IOException {
        return restart(0, count, limit);
    }

    private Duration restart(int from, int to, Duration limit) throws IOException {
        long t0 = System.nanoTime();
        for (int i = from; i < to; i++) {
            agents.get(i).close();
            agents.set(i, start(i));
        }
        awaitReady(agents.subList(from, to), limit);
        return Duration.ofNanos(System.nanoTime() - t0);
    }

    @Override
    public Duration rollout(double fraction, Duration limit) throws IOException {
        int batch = Math.max(1, (int) Math.ceil(count * fraction));
        long t0 = System.nanoTime();
        for (int from = 0; from < count; from += batch) {
            restart(from, Math.min(count, from + batch), limit);
        }
        return Duration.ofNanos(System.nanoTime() - t0);
    }

    @Override
    public void pause(double fraction, Duration pause) throws Exception {
        int n = (int) Math.round(count * fraction);
        List<AgentProcess> paused = agents.subList(count - n, count);
        for (AgentProcess a : paused) {
            signal("STOP", a.pid());
        }
        try {
            Thread.sleep(pause.toMillis());
        } finally {
            for (AgentProcess a : paused) {
                signal("CONT", a.pid());
            }
        }
    }

    private static void signal(String name, long pid) throws IOException, InterruptedException {
        new ProcessBuilder("kill", "-" + name, Long.toString(pid)).inheritIO().start().waitFor();
    }

    @Override
    public List<DeliveryLog> timingLogs() {
        return List.of();
    }

    @Override
    public SwarmStats.Snapshot read() {
        return new SwarmStats().snapshot();
    }

    @Override
    public void close() {
        agents.forEach(AgentProcess::close);
        nodes.forEach(ScaleNode::close);
        dirs.forEach(TempDir::close);
    }
}
