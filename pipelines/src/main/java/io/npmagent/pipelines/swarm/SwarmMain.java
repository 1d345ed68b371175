package io.npmagent.pipelines.swarm;

import com.google.gson.GsonBuilder;
import io.npmagent.harness.controlplane.AgentIdentity;
import io.npmagent.pipelines.bench.TempDir;
import io.npmagent.pipelines.scale.AgentProcess;
import io.npmagent.pipelines.scale.LiveCluster;
import io.npmagent.pipelines.scale.QueueMode;
import io.npmagent.pipelines.scale.ScaleCluster;
import io.npmagent.pipelines.scale.ScaleNode;
import io.npmagent.pipelines.scale.ScaleScenario;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code pipelines/swarm}: what N agents cost one API server. A real control plane holds a cluster of
 * {@code --pods} pods on fake Nodes; one real agent enforces on a node of the harness; its requests,
 * read from the audit log, are replayed by N-1 agent-shaped watchers; a load generator plays the pods'
 * lives. Each swarm size goes through the profiles, and the figures print side by side.
 */
@Command(name = "swarm", mixinStandardHelpOptions = true, description = "Measure what N agents cost the control plane.")
public final class SwarmMain implements Callable<Integer> {
    @Option(names = "--agents", split = ",", defaultValue = "1,10,100", paramLabel = "N,...",
            description = "Swarm sizes, the real agent included (default: ${DEFAULT-VALUE}).")
    List<Integer> agents;

    @Option(names = "--pods", defaultValue = "10000", description = "Pods in the cluster (default: ${DEFAULT-VALUE}).")
    int pods;

    @Option(names = "--policies", defaultValue = "1000", description = "NetworkPolicies in the cluster (default: ${DEFAULT-VALUE}).")
    int policies;

    @Option(names = "--profiles", split = ",", defaultValue = "idle,churn,pause,burst,storm,rollout", paramLabel = "NAME,...",
            description = "In this order, after the swarm's start: " + SwarmOptions.PROFILES + " (default: ${DEFAULT-VALUE}).")
    List<String> profiles;

    @Option(names = "--seconds", defaultValue = "60", description = "Length of idle, churn and pause (default: ${DEFAULT-VALUE}).")
    int seconds;

    @Option(names = "--burst-seconds", defaultValue = "60", description = "Length of the burst of 100 creations a second (default: ${DEFAULT-VALUE}).")
    int burstSeconds;

    @Option(names = "--pause", defaultValue = "0.1:20", paramLabel = "FRACTION:SECONDS",
            description = "In the pause profile, this share of the watchers stops reading for so long, as a GC pause would (default: ${DEFAULT-VALUE}).")
    String pause;

    @Option(names = "--calibrate", defaultValue = "0", paramLabel = "N",
            description = "After the sizes, N agents once more with watchers and then with N-1 real agents beside the measured one "
                    + "(start, idle, churn), and the two compared (default: ${DEFAULT-VALUE}: not).")
    int calibrate;

    @Option(names = "--capture", defaultValue = "65", paramLabel = "SECONDS",
            description = "How long the real agent runs before its requests are read from the audit log: long enough for its periodic GETs "
                    + "(discovery, every 30 s) to repeat (default: ${DEFAULT-VALUE}).")
    int capture;

    @Option(names = "--backend", defaultValue = "bpf", description = "The real agent's backend (default: ${DEFAULT-VALUE}).")
    String backend;

    @Option(names = "--out", defaultValue = "swarm-report", description = "Where swarm.md, swarm.json and the agent's logs go (default: ${DEFAULT-VALUE}).")
    Path out;

    /** The calibration: {@code calibrate} agents with watchers, then with real agents, the same profiles. */
    private void calibrate(LiveCluster cluster, AgentRequests requests, ScaleNode node, AgentProcess agent, PodLifecycles load,
            PodWrites writes, SwarmOptions options, PrintStream stdout, List<SwarmRow> rows) throws Exception {
        SwarmRun run = new SwarmRun(cluster.api, requests, node, agent, load, writes, options, stdout);
        ApiAccess access = ApiAccess.fromKubeconfig(cluster.api.agentKubeconfig(), requests.userAgent());
        try (Swarm swarm = new Swarm(access, requests, calibrate - 1, 0)) {
            run.run(calibrate, swarm, Calibration.WATCHERS, Calibration.PROFILES, rows);
        }
        System.gc();
        Thread.sleep(3_000);
        try (RealAgents real = new RealAgents(cluster.api, calibrate - 1, backend, out.resolve("logs"))) {
            run.run(calibrate, real, Calibration.AGENTS, Calibration.PROFILES, rows);
        }
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new SwarmMain()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        PrintStream stdout = System.out;
        String[] p = pause.split(":");
        SwarmOptions options = new SwarmOptions(pods, policies, agents, profiles, Duration.ofSeconds(seconds), 10, 100,
                Duration.ofSeconds(burstSeconds), Double.parseDouble(p[0]), Duration.ofSeconds(Long.parseLong(p[1])), 5, backend);
        // Every agent has its Node, the calibration's real agents too (node-2 ... node-N).
        int most = Math.max(Collections.max(agents), calibrate);
        if (!CpuPinning.possible()) {
            throw new IllegalStateException("the swarm needs two cores: one for the API server and etcd, one for everything else");
        }
        Files.createDirectories(out);
        List<SwarmRow> rows = new ArrayList<>();
        stdout.printf(Locale.ROOT, "# swarm: %,d pods, %,d policies, agents %s; making the cluster%n", pods, policies, agents);
        long t0 = System.nanoTime();
        try {
            run(options, most, rows, t0, stdout);
        } finally {
            CpuPinning.unpin(ProcessHandle.current().pid());
        }
        return 0;
    }

    private void run(SwarmOptions options, int most, List<SwarmRow> rows, long t0, PrintStream stdout) throws Exception {
        try (LiveCluster cluster = LiveCluster.create(new ScaleScenario("swarm", pods, 110, policies, Duration.ZERO, 0, 0))) {
            var cp = cluster.api.controlPlane();
            // Pinned once the cluster is made (making it uses both cores): from here on what the API server
            // and etcd spend is core 0's, and what the swarm, the load and the agent spend core 1's.
            CpuPinning.pin(ProcessHandle.current().pid(), CpuPinning.HARNESS);
            CpuPinning.pin(cp.pid("kube-controller-manager").orElseThrow(), CpuPinning.HARNESS);
            CpuPinning.pin(cp.pid("kube-apiserver").orElseThrow(), CpuPinning.CONTROL_PLANE);
            CpuPinning.pin(cp.pid("etcd").orElseThrow(), CpuPinning.CONTROL_PLANE);
            int procs = CpuPinning.awaitGomaxprocs(cluster.api);
            FakeNodes.create(cluster.api, 1, most);
            stdout.printf(Locale.ROOT, "# cluster made in %.0f s; %d Nodes; kube-apiserver on one core with GOMAXPROCS=%d; the real agent (%s) starts%n",
                    (System.nanoTime() - t0) / 1e9, most, procs, backend);
            try (TempDir dir = TempDir.create("npm-swarm-");
                    ScaleNode node = new ScaleNode("sw" + ProcessHandle.current().pid() % 100000, cluster.localPods, ScaleCluster.CLIENT_IP,
                    ScaleCluster.SERVER_IP);
                    AgentProcess agent = new AgentProcess(dir.path(), out.resolve("logs"), "agent", cluster.api.agentKubeconfig(), ScaleCluster.NODE,
                            node.netns(), node.bpffs(), backend, QueueMode.ADAPTIVE.settings, AgentProcess.DAEMONSET_JVM);
                    PodLifecycles load = new PodLifecycles(cluster.api, pods, Math.max(1, most - 1), new PodWrites())) {
                long agentStarted = System.nanoTime();
                agent.await(agent::ready, Duration.ofMinutes(10), "/readyz");
                agent.await(() -> node.connects(ScaleCluster.SERVER_IP, Duration.ofMillis(200)), Duration.ofSeconds(30),
                        "the probe policy to admit the client");
                // The audit log is read once the agent has repeated its periodic GETs (discovery, every 30 s) twice.
                long wait = capture * 1000L - (System.nanoTime() - agentStarted) / 1_000_000;
                if (wait > 0) {
                    stdout.printf(Locale.ROOT, "# waiting %d s so that the audit log holds the agent's periodic requests%n", wait / 1000);
                    Thread.sleep(wait);
                }
                AgentRequests requests = AgentRequests.fromAuditLog(cp.dir().resolve("logs/audit.log"),
                        "system:serviceaccount:" + AgentIdentity.NAMESPACE + ":" + AgentIdentity.ACCOUNT);
                stdout.println("# the agent's requests, replayed by every watcher (User-Agent " + requests.userAgent() + "):");
                requests.informers().forEach(i -> stdout.println("#   " + i.path() + "  list ?" + i.listQuery() + "  watch ?" + i.watchQuery()));
                requests.gets().forEach(g -> stdout.println("#   GET " + g.uri() + (g.period() == null ? " once" : " every " + g.period().toSeconds() + " s")));
                PodWrites writes = load.writes();
                List<String> failures = new ArrayList<>();
                for (int n : agents) {
                    try {
                        new SwarmRun(cluster.api, requests, node, agent, load, writes, options, stdout).run(n, rows);
                    } catch (IllegalStateException e) {
                        // A size the machine cannot carry (watchers not in sync in time, a flip not enforced): said, and the
                        // figures so far kept; the larger sizes are not tried.
                        failures.add(String.format(Locale.ROOT, "%d agents: %s", n, e.getMessage()));
                        stdout.println("# FAILED at " + failures.get(failures.size() - 1));
                        break;
                    }
                }
                if (calibrate > 1) {
                    calibrate(cluster, requests, node, agent, load, writes, options, stdout, rows);
                }
                long heap = agent.heapAfterGc();
                // Where that heap goes, per class: what a cut of the agent's memory starts from.
                agent.classHistogram(out.resolve("logs/agent.histogram.txt"));
                String report = String.format(Locale.ROOT,
                        "# %,d pods, %,d NetworkPolicies; kube-apiserver GOMAXPROCS=%d on its core; the real agent's live heap after a full GC: %.0f MiB%n%n",
                        pods, policies, procs, heap / 1048576.0) + SwarmTable.table(rows) + failures.stream().map(f -> "\nFailed at " + f + "\n").reduce("", String::concat)
                        + "\n" + SwarmFit.report(rows) + (calibrate > 1 ? "\n" + Calibration.compare(rows, calibrate) : "");
                stdout.println();
                stdout.print(report);
                Files.writeString(out.resolve("swarm.md"), report);
                Files.writeString(out.resolve("swarm.json"), new GsonBuilder().serializeSpecialFloatingPointValues().setPrettyPrinting().create().toJson(rows));
            }
        }
    }
}
