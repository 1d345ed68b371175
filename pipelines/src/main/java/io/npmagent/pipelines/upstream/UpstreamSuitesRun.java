package io.npmagent.pipelines.upstream;

import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.ProcessRunner;
import io.npmagent.harness.cluster.Cluster;
import io.npmagent.harness.cluster.ClusterConfig;
import io.npmagent.harness.cluster.ClusterLifecycle;
import io.npmagent.harness.cluster.Node;
import io.npmagent.harness.cluster.PodNetwork;
import io.npmagent.agent.source.k8s.KubeSource;
import io.npmagent.harness.controlplane.ControlPlane;
import io.npmagent.harness.controlplane.KubeBinaries;
import io.npmagent.harness.controlplane.NetworkPolicyApi;
import io.npmagent.harness.process.Daemon;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code pipelines/upstream-suites}: upstream's own judges of a NetworkPolicy implementation, run against the
 * agent on a real cluster, on each backend in turn: a fresh cluster of N nodes ({@link ClusterLifecycle#up}
 * with the backend: {@code npm-agent/deploy/} as shipped on every node, its ConfigMap's Backend set; the
 * scheduler spreads the suites' pods, so most pairs cross nodes), then each suite ({@link SuiteCommands}),
 * its output in {@code SUITE-BACKEND.log} with a line per finished spec or case ({@link SuiteProgress}),
 * where its pods ran recorded ({@link PodsRecorder}), for cyclonus every node's conntrack beside it
 * ({@link NodeCaptures}); then the report ({@link UpstreamSuitesMain#report}): the JSON, a table, exit 1
 * when anything failed.
 */
@Command(name = "upstream-suites", mixinStandardHelpOptions = true,
        description = "Upstream's e2e Netpol specs and cyclonus against the agent on a real cluster, per backend.")
public final class UpstreamSuitesRun implements Callable<Integer> {
    private static final List<String> BACKENDS = List.of("bpf", "iptables-legacy", "nft", "iptables-nft");
    /** Every suite --suite names; without --suite, the first two (cnp only when asked: CI's choice to make). */
    private static final List<String> SUITES = List.of("e2e", "cyclonus", "cnp");
    private static final List<String> DEFAULT_SUITES = List.of("e2e", "cyclonus");

    @Option(names = "--nodes", defaultValue = "3", paramLabel = "N", description = "Nodes per cluster (default: ${DEFAULT-VALUE}).")
    int nodes;

    @Option(names = "--backend", paramLabel = "B", description = "bpf, iptables-legacy, nft, iptables-nft (default: all four, in that order).")
    List<String> backends;

    @Option(names = "--suite", paramLabel = "S", description = "e2e, cyclonus or cnp (default: e2e and cyclonus).")
    List<String> suites;

    @Option(names = "--short", description = "The subset CI runs: 5 e2e specs plus the two multi-node ones, 2 cyclonus cases; 4 cnp tests.")
    boolean shortForm;

    @Option(names = "--json", defaultValue = "upstream-suites.json", paramLabel = "FILE",
            description = "The report (default: ${DEFAULT-VALUE}); the raw output beside it, in FILE without .json.")
    Path json;

    @Option(names = "--keep", description = "Leave the last cluster up.")
    boolean keep;

    private NodeCaptures captures;

    public static void main(String[] args) {
        System.exit(new CommandLine(new UpstreamSuitesRun()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        List<String> runBackends = backends == null ? BACKENDS : backends;
        List<String> runSuites = suites == null ? DEFAULT_SUITES : suites;
        for (String s : runSuites) {
            if (!SUITES.contains(s)) {
                throw new CommandLine.ParameterException(new CommandLine(this), "--suite is e2e, cyclonus or cnp, not " + s);
            }
        }
        Path report = json.toAbsolutePath().normalize();
        Path out = report.resolveSibling(report.getFileName().toString().replaceFirst("\\.json$", ""));
        Files.createDirectories(out);
        Path e2eTest = runSuites.contains("e2e") ? KubeBinaries.onRequest("e2e.test") : null;
        Path cyclonus = runSuites.contains("cyclonus") ? KubeBinaries.onRequest("cyclonus") : null;
        Path cnpTest = runSuites.contains("cnp") ? KubeBinaries.onRequest("cnp-conformance.test") : null;
        if (!ProcessRunner.host().available("conntrack")) {
            System.err.println("upstream-suites: conntrack is missing (pipelines/install-deps conntrack)");
            return 1;
        }
        ClusterConfig config = ClusterConfig.fromEnv(System.getenv());
        Instant start = Instant.now();
        Thread cleanUp = new Thread(() -> finish(config), "upstream-suites-stop");
        Runtime.getRuntime().addShutdownHook(cleanUp);
        List<String> runs = new ArrayList<>();
        try {
            for (String backend : runBackends) {
                Instant t = Instant.now();
                quietDown(config);
                say("[" + backend + "] a fresh cluster of " + nodes + " nodes with npm-agent on backend " + backend);
                Cluster cluster = ClusterLifecycle.up(config, nodes, PodNetwork.HOST_GW, Optional.of(backend));
                for (String suite : runSuites) {
                    runs.add(suite + ":" + backend);
                    Instant ts = Instant.now();
                    say(suite + " [" + backend + "]: running (raw output: " + out.resolve(suite + "-" + backend + ".log") + ")");
                    try (PodsRecorder pods = new PodsRecorder(cluster, out.resolve(suite + "-" + backend + ".pods"))) {
                        switch (suite) {
                            case "e2e" -> runE2e(cluster, out, backend, e2eTest);
                            case "cyclonus" -> runCyclonus(cluster, out, backend, cyclonus);
                            default -> runCnp(cluster, out, backend, cnpTest);
                        }
                    }
                    long took = Duration.between(ts, Instant.now()).toSeconds();
                    Files.writeString(out.resolve(suite + "-" + backend + ".seconds"), took + "\n");
                    say(suite + " [" + backend + "]: done in " + took + " s");
                }
                say("[" + backend + "] done in " + Duration.between(t, Instant.now()).toSeconds() + " s");
            }
        } finally {
            finish(config);
            Runtime.getRuntime().removeShutdownHook(cleanUp);
        }
        long seconds = Duration.between(start, Instant.now()).toSeconds();
        say("all done in " + seconds + " s; " + report);
        return UpstreamSuitesMain.report(report, out, runs, seconds);
    }

    private void runE2e(Cluster cluster, Path out, String backend, Path e2eTest) throws IOException, InterruptedException {
        Path junit = out.resolve("e2e-" + backend + ".junit.xml");
        Files.deleteIfExists(junit);
        runLogged("e2e", backend, out, Daemon.of("e2e.test", out.resolve("e2e-" + backend + ".log"),
                SuiteCommands.e2e(e2eTest, cluster.config().adminKubeconfig(), junit, shortForm)));
    }

    private void runCyclonus(Cluster cluster, Path out, String backend, Path cyclonus) throws IOException, InterruptedException {
        Path junit = out.resolve("cyclonus-" + backend + ".junit.xml");
        Path capture = out.resolve("cyclonus-" + backend + ".conntrack");
        for (Path p : List.of(junit, out.resolve("cyclonus-" + backend + ".excluded"), capture, capture.resolveSibling(capture.getFileName() + ".ended"))) {
            Files.deleteIfExists(p);
        }
        if (!shortForm) {
            CommandResult sctp = ProcessRunner.host().run(SuiteCommands.cyclonusSctpCases(cyclonus), "", Duration.ofMinutes(2));
            Files.write(out.resolve("cyclonus-" + backend + ".excluded"), sctp.stdout().lines().filter(l -> l.startsWith("test #")).toList());
        }
        String agnhost = Files.readString(cluster.config().adminKubeconfig().resolveSibling("agnhost-image")).strip();
        for (Node node : cluster.nodes()) {
            cluster.must(node.ctr(List.of("images", "tag", "--force", agnhost, SuiteCommands.CYCLONUS_AGNHOST)));
        }
        synchronized (this) {
            captures = NodeCaptures.start(capture, cluster.nodes());
        }
        try {
            runLogged("cyclonus", backend, out, Daemon.of("cyclonus", out.resolve("cyclonus-" + backend + ".log"),
                    SuiteCommands.cyclonus(cyclonus, junit, shortForm)).env("KUBECONFIG", cluster.config().adminKubeconfig().toString()));
        } finally {
            stopCaptures();
        }
    }

    /**
     * network-policy-api's conformance suite: the Experimental channel's ClusterNetworkPolicy CRD installed as
     * published, the suite's agnhost tag on every node, {@link CnpWebhook} serving while it runs (its changes to
     * the suite's pods in {@code cnp-B.mutations}), its report in {@code cnp-B.report.yaml}.
     */
    private void runCnp(Cluster cluster, Path out, String backend, Path binary) throws Exception {
        Path report = out.resolve("cnp-" + backend + ".report.yaml");
        Files.deleteIfExists(report);
        NetworkPolicyApi.install(ControlPlane.client(cluster.config().adminKubeconfig()), NetworkPolicyApi.Channel.EXPERIMENTAL);
        String agnhost = Files.readString(cluster.config().adminKubeconfig().resolveSibling("agnhost-image")).strip();
        for (Node node : cluster.nodes()) {
            cluster.must(node.ctr(List.of("images", "tag", "--force", agnhost, SuiteCommands.CNP_AGNHOST)));
        }
        // The agent asks discovery whether ClusterNetworkPolicies are served every DISCOVERY_PERIOD until they are:
        // the suite's first policy must not land before every node's agent follows them.
        Thread.sleep(KubeSource.DISCOVERY_PERIOD.plusSeconds(5).toMillis());
        try (CnpWebhook webhook = CnpWebhook.start(cluster, out.resolve("cnp-" + backend + ".mutations"))) {
            runLogged("cnp", backend, out, Daemon.of("cnp-conformance.test", out.resolve("cnp-" + backend + ".log"),
                    SuiteCommands.cnp(binary, report, shortForm)).env("KUBECONFIG", cluster.config().adminKubeconfig().toString()));
        }
    }

    /** Runs a suite, printing a line per finished spec or case as its log grows, until it ends; the report says how it ended. */
    private static void runLogged(String suite, String backend, Path out, Daemon.Spec spec) throws IOException, InterruptedException {
        Files.deleteIfExists(out.resolve(suite + "-" + backend + ".log"));
        Daemon run = spec.start();
        SuiteProgress progress = new SuiteProgress("upstream-suites: " + suite + " [" + backend + "]");
        long position = 0;
        StringBuilder partial = new StringBuilder();
        boolean ended = false;
        while (!ended) {
            ended = !run.alive(); // read once more after it ends: the last lines
            try (RandomAccessFile log = new RandomAccessFile(run.log().toFile(), "r")) {
                byte[] chunk = new byte[(int) Math.min(Integer.MAX_VALUE - 8, log.length() - position)];
                log.seek(position);
                log.readFully(chunk);
                position += chunk.length;
                partial.append(new String(chunk, StandardCharsets.UTF_8));
            }
            int newline;
            while ((newline = partial.indexOf("\n")) >= 0) {
                progress.line(partial.substring(0, newline)).ifPresent(System.out::println);
                partial.delete(0, newline + 1);
            }
            if (!ended) {
                run.process().waitFor(1, java.util.concurrent.TimeUnit.SECONDS);
            }
        }
    }

    private synchronized void stopCaptures() throws IOException {
        if (captures != null) {
            captures.stop();
            captures = null;
        }
    }

    /** At the end, or when stopped: the captures ended, the cluster down unless --keep. */
    private void finish(ClusterConfig config) {
        try {
            stopCaptures();
        } catch (IOException e) {
            System.err.println("upstream-suites: " + e.getMessage());
        }
        if (!keep) {
            try {
                ClusterLifecycle.down(config);
            } catch (IOException | RuntimeException e) {
                System.err.println("upstream-suites: cluster down: " + e.getMessage());
            }
        }
    }

    /** A cluster a previous run left, taken down without a word. */
    private static void quietDown(ClusterConfig config) {
        try {
            ClusterLifecycle.down(config);
        } catch (IOException | RuntimeException e) {
            // up says what is wrong, if anything is
        }
    }

    private static void say(String what) {
        System.out.println("upstream-suites: " + what);
    }
}
