package io.npmagent.harness.sandbox;

import io.npmagent.harness.process.Cgroups;
import io.kubernetes.client.openapi.ApiClient;
import io.npmagent.harness.controlplane.AgentIdentity;
import io.npmagent.harness.controlplane.ControlPlane;
import io.npmagent.harness.controlplane.NetworkPolicyApi;
import io.npmagent.harness.process.Daemon;
import io.npmagent.agent.source.k8s.ServerDigest;
import io.npmagent.agent.source.manifest.ManifestDirectory;
import io.npmagent.dataplane.exec.ProcessRunner;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The process {@code sandbox up} leaves running: the nodes of a real cluster. It starts the control plane
 * ({@link ControlPlane}: etcd, kube-apiserver with RBAC, kube-controller-manager), registers each node,
 * applies {@code deploy/rbac.yaml} and gets the agent its ServiceAccount token, starts the real
 * kube-proxy in each node's namespace ({@link SandboxNode}) and on each node the agent as the DaemonSet
 * runs it ({@code npm-agent run --kubeconfig --node NODE}, informers, its own rights only, kernel commands
 * in the node's namespace, a state directory of the node's own). Then, every 100 ms, it keeps the API
 * server holding the manifest directory ({@link ManifestApplier}) and plays kubelet for the nodes' pods
 * ({@link Kubelet}), and writes what it has done to {@code node.json} ({@link NodeStatus}). Stops
 * everything on SIGTERM; ends when an agent stops.
 */
public final class SandboxDaemon {
    private static final System.Logger LOG = System.getLogger(SandboxDaemon.class.getName());

    private SandboxDaemon() {}

    public static void run(Sandbox sandbox) throws IOException {
        Sandbox.Spec spec = sandbox.spec();
        List<SandboxNode> nodes = sandbox.nodes();
        ControlPlane cp = ControlPlane.start(sandbox.clusterDir(), nodes.get(0).ipv4());
        List<Daemon> agents = new ArrayList<>();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            agents.parallelStream().forEach(p -> p.stop(Duration.ofSeconds(20)));
            cp.close();
        }, "sandbox-stop"));
        ApiClient admin = cp.admin();
        AgentIdentity.applyRbac(admin);
        // The Experimental channel: the sandbox is where nodes peers and named ports are tried too.
        NetworkPolicyApi.install(admin, NetworkPolicyApi.Channel.EXPERIMENTAL);
        Path agentKubeconfig = AgentIdentity.kubeconfig(cp);
        for (SandboxNode node : nodes) {
            node.register(admin);
            node.addresses();
            node.startKubeProxy(cp, spec.kubeProxyMode());
        }
        List<String> names = nodes.stream().map(SandboxNode::name).toList();
        LOG.log(System.Logger.Level.INFO, "cluster up: kube-apiserver {0} at {1} in {2} ms; nodes {3}; kube-proxy in {4} mode",
                cp.version(), cp.server(), cp.startup().toMillis(), names, spec.kubeProxyMode());
        for (SandboxNode node : nodes) {
            agents.add(AgentRun.start(node, spec, agentKubeconfig));
        }

        ManifestApplier applier = new ManifestApplier(admin, names);
        Kubelet kubelet = new Kubelet(admin, nodes, new PodPlumbing(sandbox, nodes, ProcessRunner.host()));
        Path manifests = Path.of(spec.manifests());
        ServerDigest.Cached serverDigest = new ServerDigest.Cached(admin);
        String appliedHash = "";
        ManifestApplier.Outcome last = null;
        String lastPass = ""; // the directory's hash and the server's digest of the last quiet pass
        while (true) {
            String idleHash = null; // set when this pass found nothing moved since the last
            try {
                String hash = ManifestDirectory.hash(manifests);
                if (!hash.equals(appliedHash) || last == null || !last.complete()) {
                    last = applier.apply(manifests);
                    if (last.complete()) {
                        appliedHash = hash;
                    }
                }
                // The digest before the kubelet's pass: if the pass writes nothing, the node is built for exactly it.
                String digest = serverDigest.get();
                boolean quiet = kubelet.sync(last.pods());
                Daemon stopped = agents.stream().filter(a -> !a.alive()).findFirst().orElse(null);
                new NodeStatus(appliedHash, quiet ? digest : "", last.rejected(), stopped == null).write(sandbox.dir());
                // Nothing moved since the pass before: the next full pass in a second, unless the directory changes
                // first (looked at every 100 ms). A pass is lists and processes, which a benchmark would measure.
                String pass = hash + " " + digest;
                idleHash = quiet && pass.equals(lastPass) ? hash : null;
                lastPass = quiet ? pass : "";
                if (stopped != null) {
                    LOG.log(System.Logger.Level.ERROR, "an agent stopped: {0}", stopped.died());
                    return;
                }
            } catch (IOException | RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "sandbox pass failed (tried again in 100 ms)", e);
            }
            if (!waitForDirectory(manifests, idleHash, idleHash == null ? 1 : IDLE_WAITS)) {
                return;
            }
        }
    }

    /** Passes a quiet node skips: a full pass a second instead of ten. */
    private static final int IDLE_WAITS = 10;

    /**
     * Sleeps 100 ms up to {@code waits} times, ending early when the directory's hash is no longer
     * {@code hash} (null: once only); false when interrupted.
     */
    private static boolean waitForDirectory(Path manifests, String hash, int waits) {
        for (int i = 0; i < waits; i++) {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            if (hash == null) {
                return true;
            }
            try {
                if (!ManifestDirectory.hash(manifests).equals(hash)) {
                    return true;
                }
            } catch (IOException | RuntimeException e) {
                return true; // the full pass says what is wrong
            }
        }
        return true;
    }

    /** {@code npm-agent run} for one of the sandbox's nodes, as a process of its own, with the node's state directory. */
    static final class AgentRun {
        private AgentRun() {}

        static Daemon start(SandboxNode node, Sandbox.Spec spec, Path kubeconfig) throws IOException {
            // The HTTP endpoints on loopback ports of the agent's own, so agents and sandboxes side by side never clash.
            Files.createDirectories(node.stateDir());
            Path config = node.stateDir().resolve("agent-config.json");
            JsonObject settings = spec.agentConfig() == null ? new JsonObject() : JsonParser.parseString(spec.agentConfig()).getAsJsonObject();
            settings.addProperty("ListeningAddress", "127.0.0.1");
            settings.addProperty("ListeningPort", ControlPlane.freePort());
            settings.addProperty("DebugListeningAddress", "127.0.0.1");
            settings.addProperty("DebugListeningPort", ControlPlane.freePort());
            Files.writeString(config, settings + "\n");
            var shaping = Sandbox.Shaping.settings(spec.shaping());
            Path cgroup = node.cgroup(); // the node's pods' processes are below it (PodPlumbing)
            Cgroups.create(cgroup);
            String java = ProcessHandle.current().info().command().orElse("java");
            List<String> argv = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"), "io.npmagent.agent.cli.Main", "run",
                    "--kubeconfig", kubeconfig.toString(), "--node", node.name(), "--config", config.toString(),
                    "--backend", spec.backend(), "--netns", node.netns(), "--bpffs", node.bpffs().toString(),
                    "--cgroup-root", cgroup.toString(),
                    "--state-dir", node.stateDir().toString(), "--poll-ms", "50",
                    "--edt-horizon", shaping.horizon().toNanos() + "ns", "--ecn-threshold", shaping.ecnThreshold().toNanos() + "ns",
                    "--ingress-burst", shaping.ingressBurst().toNanos() + "ns", "--edt-flow-control", shaping.flowControl().label()));
            if (shaping.bigTcp()) {
                argv.add("--big-tcp");
            }
            if (shaping.bbr()) {
                argv.add("--bbr");
            }
            return Daemon.of("npm-agent run (" + node.name() + ")", node.stateDir().resolve("agent.log"), argv).start();
        }
    }
}
