package io.npmagent.pipelines.scale;

import io.npmagent.agent.backend.Backends;
import io.npmagent.dataplane.exec.ProcessRunner;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code pipelines/scale}: runs a scenario on every available backend, in each queue mode (adaptive,
 * NPM's fixed interval, foreground), repeated, side by side. {@code npm640}, {@code large} and {@code churn} drive the whole agent (informers,
 * compiler, queue, backend, kernel) through a real kube-apiserver and write a report;
 * {@code npm640-dataplane} drives the dataplane alone, as issue #5 measured it.
 */
@Command(name = "scale", mixinStandardHelpOptions = true,
        description = "Drive the agent through a scale scenario and report the figures.")
public final class ScaleMain implements Callable<Integer> {
    @Option(names = "--scenario", required = true, split = ",", paramLabel = "NAME[,NAME...]",
            description = "npm640, large, churn (the whole agent; several, comma-separated, share one report) or npm640-dataplane")
    List<String> scenarios;

    @Option(names = "--json", paramLabel = "FILE", description = "Also write the results as JSON.")
    Path json;

    @Option(names = "--short", description = "A small version of the scenario (CI's).")
    boolean quick;

    @Option(names = "--out", paramLabel = "DIR", defaultValue = "scale-report",
            description = "Where the report goes: scale.json, scale.md and the charts (default: ${DEFAULT-VALUE}).")
    Path out;

    @Option(names = "--mode", split = ",", defaultValue = "adaptive,interval", paramLabel = "MODE,...",
            description = "Queue modes, side by side: adaptive (NetPolAdaptiveBatching, the default), interval (NPM's fixed-interval "
                    + "queue), foreground (NetPolInBackground off) (default: ${DEFAULT-VALUE}).")
    List<String> modes;

    @Option(names = "--runs", description = "Runs of each scenario, backend and mode, on the same cluster; the spread is printed (default 3; 1 with --short).")
    Integer runs;

    @Option(names = "--flips", description = "Probe flips each run times at least (default 300; 20 with --short).")
    Integer flips;

    @Option(names = "--services", description = "Services in the npm640 scenario (default 640).")
    int services = 640;

    @Option(names = "--repeat", description = "Runs of each batched measurement; the median is reported (default 5).")
    int repeat = 5;

    @Option(names = "--warmup", description = "Untimed batched runs per backend before it is measured (default 5).")
    int warmup = 5;

    @Option(names = "--backend", description = "Only these backends (default: every one installed).")
    List<String> backends;

    @Option(names = "--cluster-policies", paramLabel = "N", description = "After each scenario's runs, add N ClusterNetworkPolicies "
            + "(their CRD installed) and run it again: the two side by side (results of the second are named SCENARIO+Ncnp).")
    int clusterPolicies;

    /** Every backend's runs on {@code cluster}; modes take turns within each repeat, so each sees the cluster and the machine as the others do. */
    private void runAll(LiveCluster cluster, List<String> usable, List<QueueMode> modes, int runCount, int minFlips, PrintStream stdout,
            List<AgentScaleResult> results) throws Exception {
        for (String backend : usable) {
            for (int run = 1; run <= runCount; run++) {
                for (QueueMode mode : modes) {
                    try {
                        results.add(new AgentScaleRun(cluster, backend, mode, run, minFlips, stdout, out.resolve("logs")).run());
                    } catch (AgentScaleRun.FellBehind e) {
                        stdout.println("# FAILED " + cluster.scenario.name() + " " + backend + " " + mode.label() + " #" + run + ": " + e.getMessage());
                        results.add(AgentScaleResult.failed(cluster.scenario, backend, mode, run, e.firstApplySeconds, e.getMessage()));
                    }
                }
            }
        }
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new ScaleMain()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        if (scenarios.equals(List.of("npm640-dataplane"))) {
            return dataplaneOnly();
        }
        List<ScaleScenario> chosenScenarios = new ArrayList<>();
        try {
            for (String name : scenarios) {
                chosenScenarios.add(ScaleScenario.of(name, quick));
            }
        } catch (IllegalArgumentException e) {
            System.err.println("scale: " + e.getMessage());
            return 2;
        }
        List<QueueMode> chosenModes;
        try {
            chosenModes = modes.stream().map(QueueMode::of).toList();
        } catch (IllegalArgumentException e) {
            System.err.println("scale: " + e.getMessage());
            return 2;
        }
        int runCount = runs != null ? runs : quick ? 1 : 3;
        int minFlips = flips != null ? flips : quick ? 20 : 300;
        String scenario = String.join(",", scenarios);
        List<String> chosen = backends != null ? backends : List.of("bpf", "nft", "iptables-nft", "iptables-legacy");
        String command = "pipelines/scale --scenario " + scenario + (quick ? " --short" : "")
                + (backends == null ? "" : backends.stream().map(b -> " --backend " + b).reduce("", String::concat))
                + " --mode " + String.join(",", modes) + " --runs " + runCount + " --flips " + minFlips
                + (clusterPolicies > 0 ? " --cluster-policies " + clusterPolicies : "");
        PrintStream stdout = System.out;
        stdout.println("# reproduce: " + command);
        stdout.printf(Locale.ROOT, "# %d cores, kernel %s; the agent is npm-agent run in a JVM of its own with the DaemonSet's JVM as its memory limit sizes it (%s), the API server upstream's kube-apiserver (each scenario's cluster created through it once, shared by its runs)%n",
                Runtime.getRuntime().availableProcessors(), System.getProperty("os.version"), String.join(" ", AgentProcess.DAEMONSET_JVM));
        List<AgentScaleResult> results = new ArrayList<>();
        for (ScaleScenario chosenScenario : chosenScenarios) {
            List<String> usable = chosen.stream().filter(b -> Backends.supported(b, ProcessRunner.host())).toList();
            chosen.stream().filter(b -> !usable.contains(b)).forEach(b -> stdout.println("# " + b + ": tools or kernel features missing, skipped"));
            if (usable.isEmpty()) {
                continue;
            }
            stdout.printf(Locale.ROOT, "[%s] cluster: %,d pods (%,d on this node), %,d policies, created through kube-apiserver%n", chosenScenario.name(),
                    chosenScenario.pods(), chosenScenario.localPods(), chosenScenario.policies());
            try (LiveCluster cluster = LiveCluster.create(chosenScenario)) {
                stdout.printf(Locale.ROOT, "[%s] created %,d objects in %.1f s; kube-apiserver RSS %d MiB, etcd RSS %d MiB%n", chosenScenario.name(),
                        cluster.creation.objects(), cluster.creation.seconds(), cluster.creation.apiServerRss() >> 20, cluster.creation.etcdRss() >> 20);
                runAll(cluster, usable, chosenModes, runCount, minFlips, stdout, results);
                if (clusterPolicies > 0) {
                    LiveCluster tiered = cluster.withClusterPolicies(clusterPolicies);
                    stdout.printf(Locale.ROOT, "[%s] %d ClusterNetworkPolicies added beside the %,d NetworkPolicies%n", tiered.scenario.name(),
                            clusterPolicies, chosenScenario.policies());
                    runAll(tiered, usable, chosenModes, runCount, minFlips, stdout, results);
                }
            }
        }
        stdout.println();
        stdout.print(ScaleReport.markdown(results));
        List<Path> written = ScaleReport.write(out, command, results);
        stdout.println("wrote " + written.stream().map(Path::toString).reduce((a, b) -> a + ", " + b).orElse(""));
        if (json != null) {
            Files.copy(out.resolve("scale.json"), json, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            stdout.println("wrote " + json);
        }
        return results.stream().allMatch(r -> r.failure() == null) ? 0 : 1;
    }

    /** NPM's 640 policies through the dataplane alone (compiler, queue, backend), as issue #5 measured it. */
    private int dataplaneOnly() throws IOException {
        List<String> chosen = backends != null ? backends : List.of("bpf", "iptables-nft", "iptables-legacy", "nft");
        List<ScaleResult> results = new ArrayList<>();
        PrintStream out = System.out;
        for (String backend : chosen) {
            if (!Backends.supported(backend, ProcessRunner.host())) {
                out.println("# " + backend + ": tools or kernel features missing, skipped");
                continue;
            }
            // Untimed: the JIT compiles this backend's path first, as in an agent that has been running
            // for a while (a cold JVM interprets the first batches and would measure itself, not the backend).
            out.printf("# %s: %d warm-up run(s)...%n", backend, warmup);
            out.flush();
            for (int i = 0; i < warmup; i++) {
                Npm640.run(backend, true, services);
            }
            for (boolean background : new boolean[] {false, true}) {
                // The batched runs are short and jittery on a small machine: the median of a few.
                int runs = background ? repeat : 1;
                out.printf("# %s %s: %d policies, %d run(s)...%n", backend, background ? "background" : "foreground", services, runs);
                out.flush();
                List<ScaleResult> tries = new ArrayList<>();
                for (int i = 0; i < runs; i++) {
                    tries.add(Npm640.run(backend, background, services));
                }
                tries.sort(Comparator.comparingDouble(ScaleResult::totalSeconds));
                ScaleResult r = tries.get(tries.size() / 2);
                results.add(r);
                out.printf(Locale.ROOT, "#   %s s; median %.3f s (%d transactions, longest %.3f s)%n",
                        String.join(" ", tries.stream().map(t -> String.format(Locale.ROOT, "%.3f", t.totalSeconds())).toList()),
                        r.totalSeconds(), r.transactions(), r.longestApplySeconds());
            }
        }
        out.println();
        out.println(table(results));
        if (json != null) {
            StringBuilder sb = new StringBuilder("{\"results\": [\n");
            for (int i = 0; i < results.size(); i++) {
                sb.append("  ").append(results.get(i).json()).append(i + 1 < results.size() ? ",\n" : "\n");
            }
            sb.append("]}\n");
            Files.writeString(json, sb.toString());
            out.println("wrote " + json);
        }
        return 0;
    }

    /**
     * One row per backend and mode: the total, its speedup over the same backend in the foreground, and
     * over the batched iptables-nft run (the fallback an operator would otherwise have).
     */
    static String table(List<ScaleResult> results) {
        double batchedIptablesNft = results.stream()
                .filter(f -> f.backend().equals("iptables-nft") && f.mode().equals("background"))
                .mapToDouble(ScaleResult::totalSeconds).findFirst().orElse(Double.NaN);
        StringBuilder sb = new StringBuilder();
        sb.append(String.format("%-16s %-11s %7s %10s %9s %13s %12s %10s %10s %6s%n",
                "backend", "mode", "netpols", "total s", "speedup", "vs ipt-nft bg", "longest tx s", "p50 s", "p99 s", "txs"));
        for (ScaleResult r : results) {
            double foreground = results.stream()
                    .filter(f -> f.backend().equals(r.backend()) && f.mode().equals("foreground"))
                    .mapToDouble(ScaleResult::totalSeconds).findFirst().orElse(Double.NaN);
            sb.append(String.format(Locale.ROOT, "%-16s %-11s %7d %10.3f %8.1fx %12.1fx %12.3f %10.3f %10.3f %6d%n",
                    r.backend(), r.mode(), r.netpols(), r.totalSeconds(), foreground / r.totalSeconds(),
                    batchedIptablesNft / r.totalSeconds(), r.longestApplySeconds(), r.p50Seconds(), r.p99Seconds(), r.transactions()));
        }
        return sb.toString();
    }
}
