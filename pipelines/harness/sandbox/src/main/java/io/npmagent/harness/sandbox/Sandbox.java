package io.npmagent.harness.sandbox;

import io.npmagent.harness.process.Cgroups;
import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.reflect.TypeToken;
import io.npmagent.dataplane.bandwidth.BandwidthSettings;
import io.npmagent.dataplane.bandwidth.FlowControl;
import io.npmagent.dataplane.model.ApiSyntax;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * One sandbox: a name, its nodes ({@link SandboxNode}), the network namespaces that carry it, and its
 * state directory.
 *
 * <p>Namespaces are {@code npmsb-<name>.node} (node 0), {@code npmsb-<name>.node<i>} (node i),
 * {@code npmsb-<name>.ul} (the underlay joining the nodes, when there are several) and
 * {@code npmsb-<name>.p<n>} (pod n, on whichever node), so a sandbox owns exactly the namespaces whose
 * names start with {@code npmsb-<name>.} (names cannot hold a dot) and two sandboxes never touch each
 * other's. The state directory (under {@code /run/npm-agent/sandboxes}, or {@code $NPM_AGENT_SANDBOXES})
 * holds {@code sandbox.json} (what was brought up), {@code pods.json} (what the node daemon built, each pod
 * with its node), {@code node.json} (what the daemon has put in the API server), node 0's agent's
 * {@code status.json} and {@code metrics.prom}, the logs ({@code daemon.log}, {@code agent.log},
 * {@code kube-proxy.log}), the pod servers' script, {@code node<i>/} with node i's agent's and
 * kube-proxy's own, and {@code cluster/}: the control plane's certificates, etcd data, logs and
 * {@code admin.kubeconfig}.
 */
public final class Sandbox {
    private static final Pattern NAME = Pattern.compile("[a-z0-9]([-a-z0-9]{0,18}[a-z0-9])?");
    private static final Gson GSON = new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create();

    private final String name;
    private final Path dir;

    /**
     * What {@code sandbox up} started: kept so that probe, exec and down find it again. {@code agentConfig}: keys of the
     * agent's configuration ({@code --agent-config}, a JSON object's text) set on every node's agent; null for none.
     */
    public record Spec(String name, String manifests, String backend, String kubeProxyMode, Shaping shaping, long daemonPid, String created,
            int nodes, String agentConfig) {
        /** How many nodes: a spec of an older version, without the count, had one. */
        public int nodeCount() {
            return Math.max(1, nodes);
        }
    }

    /** The bandwidth settings the sandbox's agent runs with, as the spec file keeps them (absent: the defaults). */
    public record Shaping(long horizonNanos, long ecnThresholdNanos, long ingressBurstNanos, boolean bbr, String flowControl,
            boolean bigTcp) {
        public static Shaping of(BandwidthSettings s) {
            return new Shaping(s.horizon().toNanos(), s.ecnThreshold().toNanos(), s.ingressBurst().toNanos(), s.bbr(), s.flowControl().label(), s.bigTcp());
        }

        /** The settings; a spec of an older version, without flow control, gets the default. */
        public static BandwidthSettings settings(Shaping shaping) {
            return shaping == null ? BandwidthSettings.DEFAULTS : new BandwidthSettings(Duration.ofNanos(shaping.horizonNanos),
                    Duration.ofNanos(shaping.ecnThresholdNanos), Duration.ofNanos(shaping.ingressBurstNanos), shaping.bbr,
                    shaping.flowControl == null ? BandwidthSettings.DEFAULTS.flowControl() : FlowControl.of(shaping.flowControl),
                    shaping.bigTcp);
        }
    }

    /**
     * One pod as the node daemon built it: on node {@code node} (its name; null in a record of an older
     * version: node 0); {@code cgroup} holds its processes (null in a record of an older version).
     */
    public record PodRecord(String pod, String node, String netns, int index, List<String> ips, List<String> served, long serverPid,
            String cgroup) {
        /** {@code argv} as one of this pod's processes: in its network namespace and its cgroup. */
        public List<String> command(List<String> argv) {
            List<String> inPod = new ArrayList<>(List.of("ip", "netns", "exec", netns));
            inPod.addAll(argv);
            return cgroup == null ? inPod : Cgroups.inside(Path.of(cgroup), inPod);
        }
    }

    private Sandbox(String name, Path dir) {
        this.name = name;
        this.dir = dir;
    }

    public static Sandbox named(String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("sandbox name " + ApiSyntax.quote(name)
                    + " must be 1 to 20 lower-case letters, digits or '-', starting and ending with a letter or digit");
        }
        String root = System.getenv().getOrDefault("NPM_AGENT_SANDBOXES", "/run/npm-agent/sandboxes");
        return new Sandbox(name, Path.of(root, name));
    }

    public String name() {
        return name;
    }

    public Path dir() {
        return dir;
    }

    /** The control plane's directory (certificates, etcd, logs, {@code admin.kubeconfig}). */
    public Path clusterDir() {
        return dir.resolve("cluster");
    }

    /** An admin kubeconfig for the sandbox's cluster, for kubectl. */
    public Path adminKubeconfig() {
        return clusterDir().resolve("admin.kubeconfig");
    }

    /** Node {@code index} (0 to {@link SandboxNode#MAX_NODES} - 1), whether or not the sandbox has it. */
    public SandboxNode node(int index) {
        return SandboxNode.of(this, index);
    }

    /** The nodes the sandbox was brought up with. */
    public List<SandboxNode> nodes() throws IOException {
        int n = spec().nodeCount();
        List<SandboxNode> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(node(i));
        }
        return out;
    }

    /** The node named {@code nodeName}, or an error naming the sandbox's nodes. */
    public SandboxNode node(String nodeName) throws IOException {
        List<SandboxNode> nodes = nodes();
        return nodes.stream().filter(n -> n.name().equals(nodeName)).findFirst().orElseThrow(() -> new IllegalArgumentException(
                "sandbox " + name + " has no node " + ApiSyntax.quote(nodeName) + " (its nodes: "
                        + String.join(", ", nodes.stream().map(SandboxNode::name).toList()) + ")"));
    }

    /** The namespace of the underlay that joins the nodes (a bridge, one port per node), when there are several. */
    public String underlayNetns() {
        return "npmsb-" + name + ".ul";
    }

    public String podNetns(int index) {
        return "npmsb-" + name + ".p" + index;
    }

    /** Every network namespace of this sandbox that exists, whatever state the rest is in. */
    public List<String> namespaces() throws IOException {
        Path netns = Path.of("/run/netns");
        List<String> out = new ArrayList<>();
        if (!Files.isDirectory(netns)) {
            return out;
        }
        try (Stream<Path> entries = Files.list(netns)) {
            entries.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("npmsb-" + name + ".")).sorted().forEach(out::add);
        }
        return out;
    }

    public boolean exists() {
        return Files.exists(dir.resolve("sandbox.json"));
    }

    public Spec spec() throws IOException {
        Path file = dir.resolve("sandbox.json");
        if (!Files.exists(file)) {
            throw new IOException("there is no sandbox named " + name + " (bring one up with: npm-agent sandbox up --name " + name + ")");
        }
        return GSON.fromJson(Files.readString(file, StandardCharsets.UTF_8), Spec.class);
    }

    public void writeSpec(Spec spec) throws IOException {
        write(dir.resolve("sandbox.json"), GSON.toJson(spec));
    }

    public List<PodRecord> pods() throws IOException {
        Path file = dir.resolve("pods.json");
        if (!Files.exists(file)) {
            return List.of();
        }
        return GSON.fromJson(Files.readString(file, StandardCharsets.UTF_8), new TypeToken<List<PodRecord>>() {}.getType());
    }

    void writePods(List<PodRecord> pods) throws IOException {
        write(dir.resolve("pods.json"), GSON.toJson(pods));
    }

    private static void write(Path file, String text) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** Copies a bundled script (the pod server, the prober) into the state directory; returns its path. */
    Path script(String resource) throws IOException {
        Path file = dir.resolve(resource);
        if (!Files.exists(file)) {
            try (var in = Sandbox.class.getResourceAsStream(resource)) {
                if (in == null) {
                    throw new IOException("missing bundled " + resource);
                }
                Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            }
        }
        return file;
    }
}
