package io.npmagent.harness.cluster;

import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.ProcessRunner;
import io.npmagent.harness.controlplane.Checkout;
import io.npmagent.harness.process.Await;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.stream.IntStream;

/**
 * A cluster the steps build: its {@link ClusterConfig}, its nodes, the upstream binaries' directory, and
 * the short-lived commands every step runs (on the host, in a node, {@code kubectl} as admin). Long-running
 * processes are {@link io.npmagent.harness.process.Daemon}s ({@link Node#daemon}); waits are {@link Await}.
 */
public final class Cluster {
    private static final Duration COMMAND_TIMEOUT = Duration.ofMinutes(5);

    private final ClusterConfig config;
    private final List<Node> nodes;
    private final Path bin;
    private final Path checkout;
    private final ProcessRunner host = ProcessRunner.host();
    private UpstreamImages images;

    public Cluster(ClusterConfig config, List<Node> nodes, Path bin, Path checkout) {
        this.config = config;
        this.nodes = List.copyOf(nodes);
        this.bin = bin;
        this.checkout = checkout;
    }

    /** The cluster the environment names, with {@code nodes} nodes and the binaries {@code bin}. */
    public static Cluster of(ClusterConfig config, int nodes, Path bin) throws IOException {
        if (nodes < 1 || nodes > ClusterConfig.MAX_NODES) {
            throw new IllegalArgumentException("--nodes " + nodes + ": 1 to " + ClusterConfig.MAX_NODES);
        }
        return new Cluster(config, IntStream.range(0, nodes).mapToObj(i -> Node.of(config, i)).toList(), bin, Checkout.root());
    }

    /** The cluster that is up: its nodes and binaries' directory as {@code up} recorded them. */
    public static Cluster existing(ClusterConfig config) throws IOException {
        Path recorded = config.state().resolve("bin");
        if (!Files.exists(recorded) || !Files.exists(config.nodeCount())) {
            throw new IllegalStateException("not up (pipelines/cluster up)");
        }
        return of(config, Integer.parseInt(Files.readString(config.nodeCount()).strip()), Path.of(Files.readString(recorded).strip()));
    }

    public ClusterConfig config() {
        return config;
    }

    public List<Node> nodes() {
        return nodes;
    }

    /** The node named {@code name}; a clear failure naming the nodes there are. */
    public Node node(String name) {
        return nodes.stream().filter(n -> n.name().equals(name)).findFirst().orElseThrow(() -> new IllegalArgumentException(
                "no node " + name + " (the nodes: " + String.join(", ", nodes.stream().map(Node::name).toList()) + ")"));
    }

    /** The node the control plane runs in. */
    public Node first() {
        return nodes.get(0);
    }

    public Path bin() {
        return bin;
    }

    public Path bin(String binary) {
        return bin.resolve(binary);
    }

    /** The tags of the images built from upstream binaries, read once. */
    public synchronized UpstreamImages images() {
        if (images == null) {
            images = UpstreamImages.read(this);
        }
        return images;
    }

    /** The pod ranges kube-controller-manager gave {@code node} (IPv4 first); empty before it has. */
    public List<String> podCidrs(Node node) {
        CommandResult r = kubectlRun("get", "node", node.name(), "-o", "jsonpath={.spec.podCIDRs[*]}");
        String out = r.ok() ? r.stdout().strip() : "";
        return out.isEmpty() ? List.of() : Arrays.stream(out.split("\\s+")).sorted(Comparator.comparing(cidr -> cidr.contains(":"))).toList();
    }

    public Path checkout() {
        return checkout;
    }

    public Path log(Node node, String what) {
        return config.logs().resolve(what + node.suffix() + ".log");
    }

    /** A command on the host; whatever its exit code. */
    public CommandResult run(List<String> argv) {
        return host.run(argv, "", COMMAND_TIMEOUT);
    }

    /** A command on the host that may take long (an image build); throws if it fails. */
    public CommandResult must(Duration timeout, List<String> argv) {
        return ok(host.run(argv, "", timeout));
    }

    /** A command on the host; throws with its stderr if it fails. */
    public CommandResult must(List<String> argv) {
        return ok(run(argv));
    }

    /** A command on the host fed {@code stdin} (a manifest, a ruleset); throws with its stderr if it fails. */
    public CommandResult must(List<String> argv, String stdin) {
        return ok(host.run(argv, stdin, COMMAND_TIMEOUT));
    }

    public CommandResult must(String... argv) {
        return must(Arrays.asList(argv));
    }

    /** A command inside {@code node}; throws if it fails. */
    public CommandResult inNode(Node node, String... argv) {
        return must(node.inside(Arrays.asList(argv)));
    }

    /** {@code kubectl} as the cluster's admin, from the host; whatever its exit code. */
    public CommandResult kubectlRun(String... args) {
        List<String> argv = new ArrayList<>(List.of(bin("kubectl").toString(), "--kubeconfig", config.adminKubeconfig().toString()));
        argv.addAll(Arrays.asList(args));
        return run(argv);
    }

    /** {@code kubectl} as admin; throws if it fails; its stdout. */
    public String kubectl(String... args) {
        return ok(kubectlRun(args)).stdout();
    }

    /** Waits until {@code argv} exits 0, at most {@code timeout}; the failure points at the logs. */
    public void awaitCommand(Duration timeout, String what, List<String> argv) {
        Await.until(timeout, what, () -> run(argv).ok(), () -> "logs in " + config.logs() + " (pipelines/cluster down removes it all)");
    }

    /** Waits until {@code kubectl args} exits 0. */
    public void awaitKubectl(Duration timeout, String what, String... args) {
        Await.until(timeout, what, () -> kubectlRun(args).ok(), () -> "logs in " + config.logs() + " (pipelines/cluster down removes it all)");
    }

    private static CommandResult ok(CommandResult r) {
        if (!r.ok()) {
            throw new IllegalStateException(String.join(" ", r.argv()) + ": " + r.errorSummary());
        }
        return r;
    }

    static void log(String message) {
        System.err.println("cluster: " + message);
    }
}
