package io.npmagent.pipelines.nodee2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.withinPercentage;

import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.harness.cluster.Agent;
import io.npmagent.harness.cluster.Cluster;
import io.npmagent.harness.cluster.ClusterConfig;
import io.npmagent.harness.cluster.ClusterLifecycle;
import io.npmagent.harness.cluster.HelmRelease;
import io.npmagent.harness.cluster.Monitoring;
import io.npmagent.harness.cluster.Node;
import io.npmagent.harness.cluster.PodNetwork;
import io.npmagent.harness.monitoring.DashboardQueries;
import io.npmagent.harness.process.Await;
import io.npmagent.harness.process.Daemon;
import io.npmagent.pipelines.bench.Iperf;
import io.npmagent.pipelines.bench.NativeTool;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * The agent as an operator meets it: {@code npm-agent/deploy/} applied unchanged to a real cluster of
 * {@value #NODES_PROPERTY} nodes (default 3; {@link ClusterLifecycle}: kubelet, containerd, the pod network
 * {@value #NETWORK_PROPERTY} (host-gw, default, or vxlan), kube-proxy and CoreDNS on each), enforcing between pods the kubelets made, on every backend. The
 * workload: a server pinned to the second node, its dual-stack Service (TCP and UDP), and on every node a
 * client the policy admits and one it does not, so every check has same-node and cross-node pairs. Once, on
 * the shipped ConfigMap (Backend auto): the DaemonSet Ready on every node, auto picks eBPF, /metrics is
 * scraped, a pod's congestion control is applied through the shipped CgroupRoot, NetPolInBackground is
 * flipped by editing the ConfigMap with no restart, {@code kubectl delete} of the agent's pod on the
 * server's node keeps enforcing from every node until its successor is Ready, and so does a rolling update
 * of the DaemonSet across all nodes. Then per backend ({@value #BACKENDS}, comma-separated; default all four),
 * chosen through the ConfigMap's Backend key as an operator would: the full matrix (every client to the
 * server's pod IP and ClusterIP, TCP and UDP, IPv4 and IPv6) with no policy, with an ingress policy, and
 * with an egress policy, then with both gone. The cluster comes up first and goes down at the end
 * ({@value #KEEP}=true leaves it up).
 *
 * <p>Needs root and the upstream binaries; tagged {@code node-e2e}, which Maven's test run excludes:
 * {@code pipelines/node-e2e} runs it ({@link NodeE2eMain}).
 */
@Tag("node-e2e")
class NodeE2eTest {
    static final String BACKENDS = "node-e2e.backends";
    static final String KEEP = "node-e2e.keep";
    static final String NODES_PROPERTY = "node-e2e.nodes";
    static final String NETWORK_PROPERTY = "node-e2e.pod-network";
    static final String NEWCOMERS_PROPERTY = "node-e2e.newcomers";
    /** "true": the cluster with its monitoring, and the checks on it (the agents scraped, every dashboard query answered). */
    static final String MONITORING = "node-e2e.monitoring";
    /** "true": with the monitoring, three alerts fired and resolved for real ({@link AlertsScenario}; about 25 minutes). */
    static final String ALERTS = "node-e2e.alerts";
    /** "true": the agent installed and changed with Helm (the chart in npm-agent/deploy/helm), not kubectl apply. */
    static final String HELM = "node-e2e.helm";
    static final List<String> ALL = List.of("bpf", "iptables-legacy", "nft", "iptables-nft");
    private static final Duration EVENTUALLY = Duration.ofSeconds(40);
    private static final Duration KUBELET_SYNC = Duration.ofSeconds(150);
    private static final String AGENT = "app.kubernetes.io/name=npm-agent";
    private static final String BANDWIDTH = "50M";
    private static final double BANDWIDTH_BITS = 50e6;
    private static final double BANDWIDTH_TOLERANCE = 0.05;
    private static final int IPERF_PORT = 5201;
    /** Probes at once: each is a kubectl exec, and a refused one waits its 2 s out. */
    private static final ExecutorService PROBES = Executors.newFixedThreadPool(8);

    /** How many nodes: {@value #NODES_PROPERTY}, default 3; read when the cluster comes up (NodeE2eMain sets it first). */
    private static int nodes;
    private static ClusterConfig config;
    private static Cluster cluster;
    /** Where the server runs: the second node (the first when there is one), so clients on the others are cross-node. */
    private static Node serverNode;
    private static List<Target> targets;
    /** When the cluster was up: the dashboard's queries ask from here on. */
    private static Instant clusterUp;

    /** What a client tries: an address and port, TCP or UDP. */
    record Target(String what, String address, String protocol) {
        @Override
        public String toString() {
            return what + " " + protocol;
        }
    }

    /** A probe's outcome: the client, the target, and whether it connected. */
    record Probe(Client client, Target target, boolean connected) {
        @Override
        public String toString() {
            return client + " -> " + target + ": " + (connected ? "connected" : "refused");
        }
    }

    /** A client pod: its name, its node's index, whether the policy admits it. */
    record Client(String name, int node, boolean allowed) {
        @Override
        public String toString() {
            return name + (node == serverNode.index() ? " (same node)" : " (cross node)");
        }
    }

    @BeforeAll
    static void up() throws Exception {
        config = ClusterConfig.fromEnv(System.getenv());
        nodes = Integer.getInteger(NODES_PROPERTY, 3);
        Instant start = Instant.now();
        PodNetwork network = PodNetwork.of(System.getProperty(NETWORK_PROPERTY, "host-gw"));
        say("cluster up, " + nodes + " nodes, pod network " + network);
        // A cluster an interrupted run left (its netns outlives the run) goes first, as upstream-suites does.
        try {
            ClusterLifecycle.down(config);
        } catch (RuntimeException e) {
            say("an earlier cluster's leftovers: " + e.getMessage());
        }
        cluster = ClusterLifecycle.up(config, nodes, network, Optional.empty(), monitoring());
        clusterUp = Instant.now();
        serverNode = cluster.nodes().get(Math.min(1, nodes - 1));
        say("cluster up in " + Duration.between(start, Instant.now()).toSeconds() + " s");
    }

    @AfterAll
    static void down() throws Exception {
        PROBES.shutdownNow();
        if (config != null && !Boolean.getBoolean(KEEP)) {
            ClusterLifecycle.down(config);
        }
    }

    @TestFactory
    Stream<DynamicNode> nodeE2e() {
        Stream<DynamicNode> shipped = Stream.of(DynamicContainer.dynamicContainer("on the shipped configuration", shipped().stream()));
        Stream<DynamicNode> perBackend = backends().stream()
                .map(b -> DynamicContainer.dynamicContainer("backend " + b, backend(b).stream()));
        Stream<DynamicNode> all = Stream.concat(shipped, perBackend);
        if (monitoring()) {
            all = Stream.concat(all, Stream.of(DynamicContainer.dynamicContainer("monitoring", dashboard().stream())));
        }
        if (Boolean.getBoolean(ALERTS)) {
            all = Stream.concat(all, Stream.of(DynamicContainer.dynamicContainer("alerts", alerts().stream())));
        }
        return all;
    }

    static boolean monitoring() {
        return Boolean.getBoolean(MONITORING) || Boolean.getBoolean(ALERTS);
    }

    /**
     * Every query of the shipped dashboard, as Grafana asks it over the run so far (all agents), answers with a
     * series: a panel that shows nothing on a healthy cluster is a broken panel. A query of a backend's own
     * metrics is asked only when the run included that backend.
     */
    private static Script dashboard() {
        List<DashboardQueries.Answer> answers = new ArrayList<>();
        List<DashboardQueries.Query> notAsked = new ArrayList<>();
        return new Script()
                .act(() -> {
                    Path file = cluster.checkout().resolve(Monitoring.DASHBOARD);
                    for (DashboardQueries.Answer a : DashboardQueries.ask(Monitoring.prometheus(config), file, clusterUp, Instant.now())) {
                        if (asked(a.query().expr())) {
                            answers.add(a);
                            say("dashboard: " + a.series() + " series: " + a.query());
                        } else {
                            notAsked.add(a.query());
                        }
                    }
                })
                .check(() -> "every dashboard query answers over the run (" + answers.size() + " queries"
                        + (notAsked.isEmpty() ? "" : "; not asked, the run did not have what they show: " + notAsked) + ")", () -> {
                    assertThat(answers).isNotEmpty();
                    assertThat(answers.stream().filter(a -> a.series() == 0).map(DashboardQueries.Answer::query).toList())
                            .as("queries that returned no series").isEmpty();
                });
    }

    /** The backends the run has had: those asked for, and eBPF, which the shipped configuration's auto picks (a check says so). */
    static List<String> backendsRun() {
        List<String> out = new ArrayList<>(backends());
        if (!out.contains("bpf")) {
            out.add("bpf");
        }
        return out;
    }

    /**
     * Whether the run had what {@code expr}'s metrics need: the backend that exports them, and for the bandwidth
     * counters a limited pod, which only the bpf backend's own checks make.
     */
    static boolean asked(String expr) {
        if (expr.contains("npm_bandwidth_")) {
            return backends().contains("bpf");
        }
        return backendsRun().stream().anyMatch(b -> backendsOf(expr).contains(b));
    }

    /** The backends whose runs export the metrics {@code expr} reads (all of them for the agent's own). */
    static List<String> backendsOf(String expr) {
        if (expr.contains("npm_bpf_") || expr.contains("npm_bandwidth_")) {
            return List.of("bpf");
        }
        if (expr.contains("npm_nft_")) {
            return List.of("nft");
        }
        if (expr.contains("npm_linux_iptables_") || expr.contains("npm_ipset_")) {
            return List.of("iptables-legacy", "iptables-nft");
        }
        return ALL;
    }

    /** {@link AlertsScenario}: three alerts fired and resolved for real, each on a node of its own, on the iptables-nft backend. */
    private static Script alerts() {
        AlertsScenario[] a = new AlertsScenario[1];
        boolean[] fired = new boolean[1];
        boolean[] resolved = new boolean[1];
        return new Script()
                .act(() -> {
                    a[0] = new AlertsScenario(cluster);
                    say("alerts: backend " + AlertsScenario.BACKEND + ", then the causes: "
                            + a[0].expected.stream().map(e -> e + " (" + e.cause + ")").toList());
                    ClusterLifecycle.deployAgent(cluster, AlertsScenario.BACKEND);
                    a[0].start();
                    say("alerts: causes in place; waiting for the receiver (the rules' for: is 5 and 15 minutes)");
                    fired[0] = a[0].awaitFiring();
                    a[0].stop();
                    say("alerts: causes gone; waiting for the resolutions");
                    resolved[0] = a[0].awaitResolved();
                    a[0].received().forEach(line -> say("alerts: received " + line));
                })
                .check(() -> "alerts fire at Alertmanager's receiver: " + a[0].expected.stream().map(e -> e + " " + e.fired
                        .map(r -> AlertsScenario.secondsSince(a[0].causesStarted, r.receivedAt()) + " s after its cause").orElse("never")).toList(),
                        () -> assertThat(fired[0]).isTrue())
                .check(() -> "... and resolve once the cause goes: " + a[0].expected.stream().map(e -> e + " " + e.resolved
                        .map(r -> AlertsScenario.secondsSince(a[0].causesRemoved, r.receivedAt()) + " s after").orElse("never")).toList(),
                        () -> assertThat(resolved[0]).isTrue());
    }

    static List<String> backends() {
        String list = System.getProperty(BACKENDS, "");
        return list.isBlank() ? ALL : Arrays.asList(list.split(","));
    }

    static List<Client> clients() {
        List<Client> out = new ArrayList<>();
        for (Node n : cluster.nodes()) {
            out.add(new Client("allowed-" + n.index(), n.index(), true));
            out.add(new Client("denied-" + n.index(), n.index(), false));
        }
        return out;
    }

    private static Script shipped() {
        String[] before = new String[1];
        Gap gap = new Gap();
        Gap rolling = new Gap();
        Node first = cluster.nodes().get(0);
        return new Script()
                .act(() -> {
                    if (helm()) {
                        say("helm install of npm-agent/deploy/helm/npm-agent, default values (backend auto)");
                        HelmRelease.install(cluster);
                    } else {
                        say("npm-agent/deploy/ as shipped (backend auto)");
                        ClusterLifecycle.deployAgent(cluster, "auto");
                    }
                    deployWorkload();
                })
                .check(() -> "the shipped DaemonSet's pod is Ready on all " + nodes + " nodes, with its capabilities", () -> {
                    assertThat(k("-n", "kube-system", "get", "daemonset", "npm-agent", "-o", "jsonpath={.status.numberReady}")).isEqualTo(Integer.toString(nodes));
                    assertThat(k("-n", "kube-system", "get", "pod", agentPod(first), "-o", "jsonpath={.spec.containers[0].securityContext.capabilities.add}"))
                            .contains("BPF");
                })
                .check("backend auto chose the eBPF backend on every node", () -> cluster.nodes().forEach(n ->
                        assertThat(agentLogs(n)).as(n.name()).containsPattern("backend (bpf|eBPF)")))
                .check("/metrics scraped from every node's agent", () -> cluster.nodes().forEach(n ->
                        assertThat(metrics(n)).as(n.name()).containsPattern("(?m)^npm_num_policies")))
                .then(monitoring() ? scrapedByPrometheus() : new Script())
                .act(() -> {
                    say("on the shipped configuration");
                    apply("node-e2e-policy.yaml");
                })
                .check("ingress policy enforced on the server's node for clients on every node", () -> eventuallyMatrix(onlyAllowed()))
                // The shipped CgroupRoot (the node's /sys/fs/cgroup; here the node's own cgroup is its cgroup2 root):
                // the sock_ops program sees the pods' sockets, so an annotated pod's connections get their congestion control.
                .act(() -> k("-n", "node-e2e", "annotate", "pod", "allowed-0", "npm-agent.io/tcp-congestion=cubic", "--overwrite"))
                .check("a pod's npm-agent.io/tcp-congestion applied through the shipped CgroupRoot", () -> eventually("congestion control set",
                        () -> connects("allowed-0", serverTarget()) && Pattern.compile("(?m)^npm_tcp_congestion_total\\{result=\"set\"\\} [1-9]")
                                .matcher(metrics(first)).find()))
                .act(() -> {
                    k("-n", "node-e2e", "annotate", "pod", "allowed-0", "npm-agent.io/tcp-congestion-");
                    before[0] = agentPodAndRestarts(first);
                    netPolInBackground(false);
                })
                .check((helm() ? "helm upgrade --set config.Toggles.NetPolInBackground=false" : "editing the ConfigMap")
                        + " turns NetPolInBackground off without a restart", () -> Await.until(KUBELET_SYNC, Duration.ofSeconds(1),
                        "the agent's log says so", () -> Pattern.compile("applied.*NetPolInBackground").matcher(agentLogs(first)).find()))
                .check(() -> "... the same pod, not restarted (" + before[0] + ")", () -> assertThat(agentPodAndRestarts(first)).isEqualTo(before[0]))
                .act(() -> {
                    netPolInBackground(true);
                    gap.deleteAgentAndProbe();
                })
                .check(() -> "kubectl delete of the agent's pod on the server's node: enforcement holds from every node until its successor is Ready ("
                        + gap.probes + " probes, " + gap.wrong.size() + " wrong)", gap::assertHeld)
                .act(rolling::rollingUpdateAndProbe)
                .check(() -> "a rolling update of the DaemonSet across all nodes: enforcement holds (" + rolling.probes + " probes, "
                        + rolling.wrong.size() + " wrong)", rolling::assertHeld)
                .then(helm() ? helmUpgradeBackend(first) : new Script())
                .act(() -> k("-n", "node-e2e", "delete", "networkpolicy", "server-ingress"));
    }

    /** NetPolInBackground set as the install was made: the ConfigMap edited, or {@code helm upgrade --set config.Toggles...}. */
    private static void netPolInBackground(boolean on) throws Exception {
        if (helm()) {
            HelmRelease.upgrade(cluster, "config.Toggles.NetPolInBackground=" + on);
        } else {
            Agent.configure(cluster, "Toggles.NetPolInBackground", Boolean.toString(on));
        }
    }

    static boolean helm() {
        return Boolean.getBoolean(HELM);
    }

    /**
     * {@code helm upgrade --set config.Backend=nft} with probes running: the chart's restart annotation rolls the
     * DaemonSet a node at a time, each node's agent hands over from eBPF to nft, and no probe sees a wrong verdict.
     */
    private static Script helmUpgradeBackend(Node first) {
        Gap upgrade = new Gap();
        return new Script()
                .act(() -> upgrade.upgradeAndProbe(() -> HelmRelease.upgrade(cluster, "config.Backend=nft")))
                .check(() -> "helm upgrade --set config.Backend=nft: the DaemonSet rolls node by node and enforcement holds from every node ("
                        + upgrade.probes + " probes, " + upgrade.wrong.size() + " wrong)", upgrade::assertHeld)
                .check("... and every node's agent runs nft", () -> cluster.nodes().forEach(n ->
                        assertThat(agentLogs(n)).as(n.name()).contains("backend nft")));
    }

    /** The cluster's Prometheus, through the PodMonitor's translation, has every node's agent up, named by its node. */
    private static Script scrapedByPrometheus() {
        return new Script().check("Prometheus (the shipped PodMonitor) scrapes the agent on every node, job npm-agent, labelled by node", () ->
                Await.until(Duration.ofSeconds(120), Duration.ofSeconds(5), "up{job=\"npm-agent\"} == 1 on every node", () -> {
                    try {
                        List<String> upNodes = Monitoring.prometheus(config).query("up{job=\"npm-agent\"} == 1").stream()
                                .map(r -> r.getAsJsonObject("metric").get("node").getAsString()).sorted().toList();
                        return upNodes.equals(cluster.nodes().stream().map(Node::name).sorted().toList());
                    } catch (java.io.IOException | RuntimeException e) {
                        return false;
                    }
                }));
    }

    /** The server, the Service and two clients per node, applied and Ready; the targets read from them. */
    private static void deployWorkload() throws Exception {
        String agnhost = Files.readString(config.state().resolve("agnhost-image")).strip();
        StringBuilder yaml = new StringBuilder(Files.readString(manifest("node-e2e.yaml")).replace("@SERVER_NODE@", serverNode.name()));
        String clients = Files.readString(manifest("node-e2e-clients.yaml"));
        for (Node n : cluster.nodes()) {
            yaml.append("\n").append(clients.replace("@NODE@", n.name()).replace("@INDEX@", Integer.toString(n.index())));
        }
        Path pods = config.state().resolve("node-e2e.yaml");
        Files.writeString(pods, yaml.toString().replace("@AGNHOST_IMAGE@", agnhost));
        k("apply", "-f", pods.toString());
        k("-n", "node-e2e", "wait", "--for=condition=Ready", "pod", "--all", "--timeout=120s");
        List<String> podIps = List.of(k("-n", "node-e2e", "get", "pod", "server", "-o", "jsonpath={.status.podIPs[*].ip}").split("\\s+"));
        List<String> clusterIps = List.of(k("-n", "node-e2e", "get", "service", "server", "-o", "jsonpath={.spec.clusterIPs[*]}").split("\\s+"));
        assertThat(podIps).as("the server's addresses, IPv4 and IPv6").hasSize(2);
        assertThat(clusterIps).as("the Service's ClusterIPs, IPv4 and IPv6").hasSize(2);
        List<Target> t = new ArrayList<>();
        for (String ip : podIps) {
            String family = ip.contains(":") ? "IPv6" : "IPv4";
            t.add(new Target("pod " + family, hostPort(ip, 8080), "tcp"));
            t.add(new Target("pod " + family, hostPort(ip, 8081), "udp"));
        }
        for (String ip : clusterIps) {
            String family = ip.contains(":") ? "IPv6" : "IPv4";
            t.add(new Target("ClusterIP " + family, hostPort(ip, 80), "tcp"));
            t.add(new Target("ClusterIP " + family, hostPort(ip, 81), "udp"));
        }
        targets = List.copyOf(t);
        say("server on " + serverNode.name() + " at " + podIps + " (Service " + clusterIps + "), clients allowed-i and denied-i on node i");
    }

    private static String hostPort(String ip, int port) {
        return (ip.contains(":") ? "[" + ip + "]" : ip) + ":" + port;
    }

    private static Target serverTarget() {
        return targets.get(0);
    }

    /** Probing through a disruption of the agents: the ingress matrix's IPv4 TCP pairs, again and again, until it is over. */
    private static final class Gap {
        int probes;
        final List<Probe> wrong = new ArrayList<>();
        boolean over;

        void deleteAgentAndProbe() {
            String old = agentPod(serverNode);
            k("-n", "kube-system", "delete", "pod", old, "--wait=false");
            probeUntil(() -> kubectl("-n", "kube-system", "get", "pods", "-l", AGENT, "--field-selector", "spec.nodeName=" + serverNode.name(),
                    "-o", "jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type==\"Ready\")].status}{\"\\n\"}{end}").stdout()
                    .lines().map(l -> l.split(" ")).anyMatch(f -> f.length == 2 && !f[0].equals(old) && f[1].equals("True")));
        }

        void upgradeAndProbe(Script.Action upgrade) {
            try {
                upgrade.run();
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
            probeUntil(() -> kubectl("-n", "kube-system", "rollout", "status", "daemonset/npm-agent", "--timeout=1s").ok());
        }

        void rollingUpdateAndProbe() {
            k("-n", "kube-system", "rollout", "restart", "daemonset/npm-agent");
            probeUntil(() -> kubectl("-n", "kube-system", "rollout", "status", "daemonset/npm-agent", "--timeout=1s").ok());
        }

        private void probeUntil(java.util.function.BooleanSupplier done) {
            Instant deadline = Instant.now().plusSeconds(300);
            List<Target> v4tcp = targets.stream().filter(t -> t.protocol().equals("tcp") && !t.address().startsWith("[")).toList();
            while (Instant.now().isBefore(deadline)) {
                for (Probe p : probeAll(clients(), v4tcp)) {
                    probes++;
                    if (p.connected() != p.client().allowed()) {
                        wrong.add(p);
                    }
                }
                if (done.getAsBoolean()) {
                    over = true;
                    return;
                }
            }
        }

        void assertHeld() {
            assertThat(wrong).isEmpty();
            assertThat(probes).isPositive();
            assertThat(over).as("the agents were back within 5 minutes").isTrue();
        }
    }

    private static Script backend(String b) {
        Script s = new Script()
                .act(() -> {
                    say("backend " + b + " (the ConfigMap's Backend: " + b + ")");
                    ClusterLifecycle.deployAgent(cluster, b);
                })
                .check(b + ": the agent's pod is Ready and runs " + b + " on every node", () -> cluster.nodes().forEach(n ->
                        assertThat(agentLogs(n)).as(n.name()).contains("backend " + b)));
        if (b.equals("bpf")) {
            s.check("bpf: its forward hook is linked on every node (Service traffic judged after DNAT)", () -> cluster.nodes().forEach(n ->
                    assertThat(agentLogs(n)).as(n.name()).doesNotContain("no forward hook")));
        }
        s.check(b + ": what the backend before left in every node's kernel is gone, " + b + "'s own is there", () -> eventually(
                        "only " + b + "'s state", () -> cluster.nodes().stream().allMatch(n -> ALL.stream().allMatch(o -> o.equals(b) == traces(n, o)))))
                .then(policyChecks(b));
        if (nodes > 1) {
            s.then(newcomers(b));
        }
        // Bandwidth limits are the eBPF backend's alone (the others report them as not applied).
        return b.equals("bpf") ? s.then(bandwidth()) : s;
    }

    /**
     * New pods' identities reaching every other node ({@link Newcomers}): {@value #NEWCOMERS_PROPERTY} pods (default
     * 200), their figures in the check's name; no stranger ever admitted, every newcomer admitted everywhere.
     */
    private static Script newcomers(String b) {
        Newcomers.Figures[] f = new Newcomers.Figures[1];
        return new Script()
                .act(() -> {
                    String agnhost = Files.readString(config.state().resolve("agnhost-image")).strip();
                    f[0] = new Newcomers(cluster, NativeTool.buildStatic("firstconnect"), agnhost, config.state())
                            .run(Integer.getInteger(NEWCOMERS_PROPERTY, 200));
                    // Beside the build, not in the cluster's state: down removes that.
                    Path samples = Files.createDirectories(cluster.checkout().resolve("pipelines/target/node-e2e")).resolve("newcomers-" + b + ".tsv");
                    Files.write(samples, f[0].samples().stream().map(x -> String.join("\t", x.pod(), Integer.toString(x.from()),
                            Integer.toString(x.to()), x.family(), String.format(Locale.ROOT, "%.1f", x.ms()), x.first())).toList());
                    say(b + ": newcomers: " + f[0].summary() + " (every pair: " + samples + ")");
                })
                .check(() -> b + ": a new pod's identity reaches every other node: " + f[0].summary(), () -> {
                    assertThat(f[0].strangerConnects()).as("strangers admitted: the agent failed open").isEmpty();
                    assertThat(f[0].unreached()).as("newcomers never admitted").isEmpty();
                    assertThat(f[0].samples()).isNotEmpty();
                });
    }

    /**
     * A pod's bandwidth annotations across nodes: iperf3 (the host's, run in each pod's network namespace) from
     * the allowed client on the first node to the server on the second, first with the client's egress limited,
     * then with the server's ingress limited; each within 5% of the limit.
     */
    private static Script bandwidth() {
        Daemon[] server = new Daemon[1];
        double[] got = new double[2];
        String client = "allowed-0";
        return new Script()
                .act(() -> {
                    Path log = config.logs().resolve("node-e2e-iperf3.log");
                    server[0] = Daemon.of("iperf3-server", log, inPod("server", Iperf.server(IPERF_PORT))).start()
                            .awaitReady(Duration.ofSeconds(20), "iperf3's server in the server pod", () -> logSays(log, Iperf.READY));
                    k("-n", "node-e2e", "annotate", "pod", client, "kubernetes.io/egress-bandwidth=" + BANDWIDTH, "--overwrite");
                    got[0] = eventuallyWithinLimit(client);
                    if (monitoring()) {
                        heldUntilScrapedTwice(client);
                    }
                })
                .check(() -> String.format(Locale.ROOT, "bpf: egress limit %s on %s, to the server on another node: %.1f Mbit/s", BANDWIDTH,
                        client, got[0] / 1e6), () -> assertThat(got[0]).isCloseTo(BANDWIDTH_BITS, withinPercentage(BANDWIDTH_TOLERANCE * 100)))
                .act(() -> {
                    k("-n", "node-e2e", "annotate", "pod", client, "kubernetes.io/egress-bandwidth-");
                    k("-n", "node-e2e", "annotate", "pod", "server", "kubernetes.io/ingress-bandwidth=" + BANDWIDTH, "--overwrite");
                    got[1] = eventuallyWithinLimit(client);
                })
                .check(() -> String.format(Locale.ROOT, "bpf: ingress limit %s on the server, from %s on another node: %.1f Mbit/s", BANDWIDTH,
                        client, got[1] / 1e6), () -> assertThat(got[1]).isCloseTo(BANDWIDTH_BITS, withinPercentage(BANDWIDTH_TOLERANCE * 100)))
                .act(() -> {
                    k("-n", "node-e2e", "annotate", "pod", "server", "kubernetes.io/ingress-bandwidth-");
                    server[0].stop();
                });
    }

    /**
     * Keeps POD's limit until Prometheus holds two samples of its counters, which is what a rate, and so the
     * dashboard's "Bandwidth-limited pods" panel, needs: a limit shorter than a scrape interval (30 s) would
     * never be drawn.
     */
    private static void heldUntilScrapedTwice(String pod) {
        String expr = "count_over_time(npm_bandwidth_bytes_total{job=\"npm-agent\", namespace=\"node-e2e\", pod=\"" + pod + "\"}[5m]) >= 2";
        Await.until(Duration.ofSeconds(150), Duration.ofSeconds(5), expr, () -> {
            try {
                return !Monitoring.prometheus(config).query(expr).isEmpty();
            } catch (java.io.IOException | RuntimeException e) {
                return false;
            }
        });
    }

    /**
     * iperf3 from CLIENT to the server, again until the limit has landed (a rate within the tolerance) or a
     * while has passed; the last rate measured.
     */
    private static double eventuallyWithinLimit(String client) throws Exception {
        String address = targets.get(0).address();
        String ip = address.substring(0, address.lastIndexOf(':'));
        double rate = 0;
        for (int i = 0; i < 4; i++) {
            rate = Iperf.report(cluster.run(inPod(client, Iperf.client(ip, IPERF_PORT, 5, 1)))).bitsPerSecond();
            if (Math.abs(rate - BANDWIDTH_BITS) <= BANDWIDTH_TOLERANCE * BANDWIDTH_BITS) {
                break;
            }
        }
        return rate;
    }

    private static boolean logSays(Path log, String text) {
        try {
            return Files.readString(log).contains(text);
        } catch (java.io.IOException e) {
            return false;
        }
    }

    /** ARGV run in the pod's network namespace, from the host (the pod's container's process, found through its node's containerd). */
    private static List<String> inPod(String pod, List<String> argv) {
        List<String> out = new ArrayList<>(List.of("nsenter", "-t", containerPid("node-e2e", pod), "-n", "--"));
        out.addAll(argv);
        return out;
    }

    /** The host's PID of the pod's (first) container's process, found through its node's containerd. */
    static String containerPid(String namespace, String pod) {
        String node = k("-n", namespace, "get", "pod", pod, "-o", "jsonpath={.spec.nodeName}");
        String id = k("-n", namespace, "get", "pod", pod, "-o", "jsonpath={.status.containerStatuses[0].containerID}").replace("containerd://", "");
        return cluster.must(cluster.node(node).ctr(List.of("task", "ls"))).stdout().lines().map(l -> l.split("\\s+"))
                .filter(f -> f.length >= 2 && f[0].equals(id)).map(f -> f[1]).findFirst()
                .orElseThrow(() -> new IllegalStateException("no task for " + pod + "'s container " + id + " on " + node));
    }

    private static Script policyChecks(String b) {
        return new Script()
                .check(b + ": no policy: every client reaches the server, by pod IP and ClusterIP, TCP and UDP, IPv4 and IPv6",
                        () -> eventuallyMatrix(c -> true))
                .act(() -> apply("node-e2e-policy.yaml"))
                .check(b + ": ingress policy: the allowed clients on every node connect, the denied are refused, every target",
                        () -> eventuallyMatrix(onlyAllowed()))
                .check(b + ": npm-agent flows, run in the server's node's agent pod, names every denied client's flow and the policy", () -> {
                    for (Node n : cluster.nodes()) {
                        deniedFlowNamed("denied-" + n.index());
                    }
                })
                .act(() -> {
                    k("-n", "node-e2e", "delete", "networkpolicy", "server-ingress");
                    apply("node-e2e-egress-policy.yaml");
                })
                .check(b + ": egress policy: the clients allowed only DNS are refused on every node, the others connect, every target",
                        () -> eventuallyMatrix(onlyAllowed()))
                .check(b + ": egress policy: ... but reach kube-dns through its ClusterIP (TCP/53) from every node", () -> {
                    for (Node n : cluster.nodes()) {
                        assertThat(connects("denied-" + n.index(), new Target("kube-dns", ClusterConfig.DNS_SERVICE_IP + ":53", "tcp"))).as(n.name()).isTrue();
                    }
                })
                .act(() -> k("-n", "node-e2e", "delete", "networkpolicy", "denied-egress"))
                .check(b + ": policies gone: every client connects again", () -> eventuallyMatrix(c -> true));
    }

    /**
     * {@code kubectl exec} into the agent's pod on the server's node, {@code npm-agent flows} as shipped (the CLI in the
     * image, the debug listener of the shipped ConfigMap): a denied flow from {@code client} to the server, attributed to
     * the NetworkPolicy isolating it.
     */
    private static void deniedFlowNamed(String client) {
        String out = k("-n", "kube-system", "exec", agentPod(serverNode), "--", "npm-agent", "flows", "--verdict", "denied", "--pod",
                "node-e2e/" + client, "--output", "json");
        List<com.google.gson.JsonObject> flows = out.lines().filter(l -> !l.isBlank())
                .map(l -> com.google.gson.JsonParser.parseString(l).getAsJsonObject()).toList();
        assertThat(flows).as("%s's flows on %s: %s", client, serverNode.name(), out).anySatisfy(f -> {
            assertThat(f.getAsJsonObject("destination").get("pod").getAsString()).isEqualTo("node-e2e/server");
            assertThat(f.get("direction").getAsString()).isEqualTo("ingress");
            assertThat(f.getAsJsonObject("attribution").get("text").getAsString()).contains("node-e2e/server-ingress");
        });
    }

    /** With the ingress policy (or the egress policy): the clients labelled access=allowed connect, the others are refused. */
    private static java.util.function.Predicate<Client> onlyAllowed() {
        return Client::allowed;
    }

    /**
     * Every client to every target, retried for a while (a policy lands within a batch, on every node in its
     * own time) until each connects exactly when {@code expected} says; the failure lists what was wrong.
     */
    private static void eventuallyMatrix(java.util.function.Predicate<Client> expected) {
        List<List<Probe>> last = new ArrayList<>(List.of(List.of()));
        Await.until(EVENTUALLY, "every client to every target as the policy says", () -> {
            List<Probe> wrong = probeAll(clients(), targets).stream().filter(p -> p.connected() != expected.test(p.client())).toList();
            last.set(0, wrong);
            return wrong.isEmpty();
        }, () -> "wrong: " + last.get(0));
    }

    /** Each client to each target, at once. */
    static List<Probe> probeAll(List<Client> clients, List<Target> to) {
        List<Future<Probe>> futures = new ArrayList<>();
        for (Client c : clients) {
            for (Target t : to) {
                futures.add(PROBES.submit(() -> new Probe(c, t, connects(c.name(), t))));
            }
        }
        List<Probe> out = new ArrayList<>();
        for (Future<Probe> f : futures) {
            try {
                out.add(f.get());
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        return out;
    }

    /** Whether BACKEND has left something in the node's kernel: bpf its pins, nft its table, iptables its NPM- chains. */
    static boolean traces(Node node, String backend) {
        List<String> argv = switch (backend) {
            case "bpf" -> List.of("sh", "-c", "ls /sys/fs/bpf/npm-agent 2>/dev/null | grep -q .");
            case "nft" -> List.of("nft", "list", "table", "inet", "npm_agent");
            default -> List.of("sh", "-c", "\"$0-save\" 2>/dev/null | grep -q '^:NPM-'", backend);
        };
        return cluster.run(node.inside(argv)).ok();
    }

    /** Whether a connection from the client pod to the target opens (agnhost connect, 2 s; UDP: an answer comes back). */
    static boolean connects(String client, Target target) {
        return kubectl("-n", "node-e2e", "exec", client, "--", "/agnhost", "connect", "--timeout=2s", "--protocol=" + target.protocol(),
                target.address()).ok();
    }

    /** Retried for a while: a policy lands within a batch, not at once. */
    static void eventually(String what, java.util.function.BooleanSupplier condition) {
        Await.until(EVENTUALLY, Duration.ofSeconds(1), what, condition);
    }

    private static String metrics(Node node) {
        return cluster.inNode(node, "curl", "-sf", "--max-time", "5", "http://" + node.ip() + ":10091/metrics").stdout();
    }

    private static String agentPod(Node node) {
        return k("-n", "kube-system", "get", "pods", "-l", AGENT, "--field-selector", "spec.nodeName=" + node.name(),
                "-o", "jsonpath={.items[0].metadata.name}");
    }

    private static String agentLogs(Node node) {
        return k("-n", "kube-system", "logs", agentPod(node));
    }

    private static String agentPodAndRestarts(Node node) {
        String pod = agentPod(node);
        return pod + " " + k("-n", "kube-system", "get", "pod", pod, "-o", "jsonpath={.status.containerStatuses[0].restartCount}");
    }

    private static void apply(String manifest) throws Exception {
        k("apply", "-f", manifest(manifest).toString());
    }

    private static Path manifest(String name) {
        return cluster.checkout().resolve("pipelines/cluster-manifests").resolve(name);
    }

    private static CommandResult kubectl(String... args) {
        return cluster.kubectlRun(args);
    }

    private static String k(String... args) {
        return cluster.kubectl(args).strip();
    }

    static void say(String message) {
        System.out.println("node-e2e: " + message);
    }
}
