package io.npmagent.harness.sandbox;

import io.npmagent.harness.node.NetworkNamespace;
import io.npmagent.harness.process.Cgroups;
import io.npmagent.harness.process.Daemon;
import io.npmagent.agent.backend.Backends;
import io.npmagent.harness.process.Logs;
import io.npmagent.agent.run.AgentStatus;
import io.npmagent.bpf.libbpf.Capabilities;
import io.npmagent.dataplane.bandwidth.BandwidthSettings;
import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.CommandRunner;
import io.npmagent.dataplane.exec.ProcessRunner;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Bringing a sandbox up and down. Up: each node's namespace (forwarding on) and bpffs, the underlay
 * between the nodes ({@link SandboxUnderlay}), the state directory, and the node daemon started detached
 * (its kernel commands run in the nodes' namespaces); then it waits until the daemon has built the pods
 * and every node's agent has applied the directory. Down: whatever exists of it, in any state (the daemon may have
 * crashed, {@code up} may have failed half-way): the daemon, the pod servers, every namespace of the
 * sandbox, the state directory.
 */
public final class SandboxLifecycle {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private SandboxLifecycle() {}

    /** A reason {@code up} cannot go ahead, for the user. */
    public static final class UpFailed extends Exception {
        private static final long serialVersionUID = 1L;

        UpFailed(String message) {
            super(message);
        }
    }

    public static final List<String> KUBE_PROXY_MODES = List.of("iptables", "nftables");

    private static boolean jsonObject(String text) {
        try {
            return com.google.gson.JsonParser.parseString(text).isJsonObject();
        } catch (com.google.gson.JsonParseException e) {
            return false;
        }
    }

    /**
     * @param agentConfig keys of the agent's configuration file (a JSON object's text, as the ConfigMap's
     *                    {@code npm-agent.json}) for every node's agent, or null
     */
    public static AgentStatus up(Sandbox sandbox, Path manifests, String backend, String kubeProxyMode, BandwidthSettings bandwidth, int nodes,
            String agentConfig, Duration wait) throws IOException, UpFailed {
        CommandRunner host = ProcessRunner.host();
        if (agentConfig != null && !jsonObject(agentConfig)) {
            throw new UpFailed("--agent-config must be a JSON object (keys of the agent's npm-agent.json), not " + agentConfig);
        }
        if (!Files.isDirectory(manifests)) {
            throw new UpFailed("--manifests " + manifests + " is not a directory");
        }
        if (nodes < 1 || nodes > SandboxNode.MAX_NODES) {
            throw new UpFailed("--nodes is 1 to " + SandboxNode.MAX_NODES + ", not " + nodes);
        }
        if (!KUBE_PROXY_MODES.contains(kubeProxyMode)) {
            throw new UpFailed("--kube-proxy-mode is iptables or nftables, not " + kubeProxyMode);
        }
        String resolved = resolve(backend, host);
        for (String tool : List.of("ip", "python3", "setsid", "socat", kubeProxyMode.equals("nftables") ? "nft" : "iptables")) {
            if (!host.available(tool)) {
                throw new UpFailed(tool + " is not installed (pipelines/test installs what the sandbox needs)");
            }
        }
        if (sandbox.exists() || !sandbox.namespaces().isEmpty()) {
            if (daemonAlive(sandbox)) {
                throw new UpFailed("sandbox " + sandbox.name() + " is up already (npm-agent sandbox down --name " + sandbox.name() + ")");
            }
            down(sandbox); // what a crash left behind
        }
        Files.createDirectories(sandbox.dir());
        try {
            List<SandboxNode> all = new ArrayList<>();
            for (int i = 0; i < nodes; i++) {
                SandboxNode node = sandbox.node(i);
                all.add(node);
                NetworkNamespace.create(node.netns()).forwarding();
                mountBpffs(node, host);
                if (resolved.equals("bpf") && !Capabilities.bpffsAt(node.bpffs())) {
                    throw new IllegalStateException("the eBPF backend needs a bpffs, and none could be mounted at " + node.bpffs());
                }
            }
            SandboxUnderlay.up(sandbox, all);
            Path absolute = manifests.toAbsolutePath().normalize();
            // The upstream binaries first (built on a machine's first run, with their progress), so the daemon's wait is only for the cluster.
            io.npmagent.harness.controlplane.KubeBinaries.dir();
            sandbox.writeSpec(new Sandbox.Spec(sandbox.name(), absolute.toString(), resolved, kubeProxyMode, Sandbox.Shaping.of(bandwidth), 0,
                    Instant.now().toString(), nodes, agentConfig));
            sandbox.script("podserver.py");
            sandbox.script("prober.py");
            long pid = startDaemon(sandbox);
            sandbox.writeSpec(new Sandbox.Spec(sandbox.name(), absolute.toString(), resolved, kubeProxyMode, Sandbox.Shaping.of(bandwidth), pid,
                    Instant.now().toString(), nodes, agentConfig));
            return Convergence.await(sandbox, wait);
        } catch (Convergence.NotConverged e) {
            throw new UpFailed(e.getMessage() + tail(sandbox.dir().resolve("daemon.log")) + tail(sandbox.dir().resolve("agent.log")));
        } catch (IllegalStateException e) {
            down(sandbox);
            throw new UpFailed(e.getMessage());
        }
    }

    /** Checks the name, and the tools a netfilter backend needs; auto and bpf are settled once the bpffs is there. */
    private static String resolve(String backend, CommandRunner host) throws UpFailed {
        if (!Backends.NAMES.contains(backend)) {
            throw new UpFailed("unknown backend \"" + backend + "\" (" + String.join(", ", Backends.NAMES) + ")");
        }
        if (backend.equals("bpf") && !Backends.supported("bpf", host)) {
            throw new UpFailed("the eBPF backend cannot enforce here: " + String.join(", ", Capabilities.probe(Capabilities.DEFAULT_BPFFS).missing()));
        }
        if (!backend.equals("auto") && !backend.equals("bpf") && !Backends.supported(backend, host)) {
            throw new UpFailed("the tools backend " + backend + " needs are not installed (pipelines/test installs them)");
        }
        return backend;
    }

    /**
     * A bpffs of the node's own for the eBPF backend's pins: a restarted daemon adopts them, and
     * {@code down} unmounts it, which frees them. Where bpffs cannot be mounted, auto falls back.
     */
    private static void mountBpffs(SandboxNode node, CommandRunner host) throws IOException {
        Files.createDirectories(node.bpffs());
        if (!Capabilities.bpffsAt(node.bpffs())) {
            CommandResult r = host.run(List.of("mount", "-t", "bpf", "npm-agent-sandbox", node.bpffs().toString()), "", TIMEOUT);
            if (!r.ok()) {
                System.getLogger(SandboxLifecycle.class.getName()).log(System.Logger.Level.WARNING,
                        "cannot mount a bpffs for sandbox node {0}: {1}", node.name(), r.errorSummary());
            }
        }
    }

    private static long startDaemon(Sandbox sandbox) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        // On the host, not under "ip netns exec": that gives a private mount namespace, where the pod
        // namespaces the daemon creates would be invisible to everyone else. Its kernel commands run in
        // the node namespace instead.
        return Daemon.of("the sandbox's node daemon", sandbox.dir().resolve("daemon.log"), List.of(java,
                "-cp", System.getProperty("java.class.path"), "io.npmagent.harness.cli.HarnessMain", "sandbox", "node", "--name", sandbox.name()))
                .env("NPM_AGENT_SANDBOXES", sandbox.dir().getParent().toString()).detached().start().pid();
    }

    /** Removes everything of the sandbox that exists; returns what it removed, for the user. */
    public static List<String> down(Sandbox sandbox) throws IOException {
        List<String> removed = new ArrayList<>();
        String dir = sandbox.dir().toString();
        // Every process started for this sandbox names its state directory (daemon, pod servers, probers).
        List<ProcessHandle> ours = ProcessHandle.allProcesses()
                .filter(h -> h.pid() != ProcessHandle.current().pid())
                .filter(h -> commandLine(h.pid()).map(c -> c.endsWith("sandbox node --name " + sandbox.name())
                        || c.contains(dir + "/")).orElse(false))
                .toList();
        ours.forEach(ProcessHandle::destroy);
        for (ProcessHandle h : ours) {
            h.onExit().orTimeout(10, TimeUnit.SECONDS).exceptionally(t -> {
                h.destroyForcibly();
                return h;
            }).join();
        }
        if (!ours.isEmpty()) {
            removed.add(ours.size() + " processes");
        }
        for (String ns : sandbox.namespaces()) {
            CommandResult r = ProcessRunner.host().run(List.of("ip", "netns", "del", ns), "", TIMEOUT);
            if (r.ok()) {
                removed.add("network namespace " + ns);
            }
        }
        // Every node it may have had, whatever the spec says (up may have failed before writing it).
        boolean cgroup2 = Cgroups.cgroup2Mount().isPresent();
        for (int i = 0; i < SandboxNode.MAX_NODES; i++) {
            Path cgroup = cgroup2 ? sandbox.node(i).cgroup() : null;
            if (cgroup != null && Files.isDirectory(cgroup)) {
                Cgroups.remove(cgroup, Duration.ofSeconds(10));
                removed.add("cgroup " + cgroup);
            }
            Path bpffs = sandbox.node(i).bpffs();
            if (Capabilities.bpffsAt(bpffs)) {
                CommandResult r = ProcessRunner.host().run(List.of("umount", bpffs.toString()), "", TIMEOUT);
                if (!r.ok()) {
                    throw new IOException("cannot unmount " + bpffs + ": " + r.errorSummary());
                }
                removed.add("bpffs " + bpffs);
            }
        }
        if (Files.exists(sandbox.dir())) {
            try (Stream<Path> files = Files.walk(sandbox.dir())) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
            removed.add("state directory " + sandbox.dir());
        }
        return removed;
    }

    /**
     * The whole command line from /proc. Not {@code ProcessHandle.info().commandLine()}: the JDK gives up on
     * command lines longer than a page, and a daemon started with a long class path has one; missing it
     * here left daemons running after {@code down}.
     */
    static Optional<String> commandLine(long pid) {
        try {
            byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
            return Optional.of(new String(raw, StandardCharsets.UTF_8).replace('\0', ' ').strip());
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    public static boolean daemonAlive(Sandbox sandbox) {
        try {
            long pid = sandbox.spec().daemonPid();
            return pid > 0 && ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
        } catch (IOException e) {
            return false;
        }
    }

    private static String tail(Path log) {
        return "\n--- last lines of " + log + " ---\n" + Logs.tail(log, 15);
    }

}
