package io.npmagent.harness.sandbox;

import io.npmagent.harness.node.NetworkNamespace;
import io.npmagent.harness.node.PodLink;
import io.npmagent.harness.process.Cgroups;
import io.npmagent.harness.process.Daemon;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.ContainerPort;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.CommandRunner;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * Builds the sandbox's pods as a CNI and a container runtime would, each on the node its
 * {@code spec.nodeName} names: for each live pod-network pod with an address, a network namespace joined
 * to its node's by a veth pair ({@code eth0} in the pod, {@code veth<n>} in the node), its addresses (/32,
 * /128), a default route via the node ({@code 169.254.1.1}, {@code fe80::1}, as Calico does), the node's
 * host routes back and, on every other node, routes to it over the underlay ({@link SandboxUnderlay}),
 * and a server on every declared TCP and UDP port, started in a cgroup of the pod's own below its node's
 * ({@link PodCgroups}). A pod that goes, or changes address or ports, is torn down (and built again).
 * Host-network and terminal pods get nothing; SCTP ports are not served (no SCTP sockets).
 *
 * <p>Every command names its namespace ({@code ip -n}), so it works from any namespace and changes
 * nothing outside the sandbox's own.
 */
final class PodPlumbing {
    private static final System.Logger LOG = System.getLogger(PodPlumbing.class.getName());
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final Sandbox sandbox;
    private final List<SandboxNode> nodes;
    private final CommandRunner host;
    private final Map<String, Sandbox.PodRecord> built = new LinkedHashMap<>();
    private int nextIndex = 1;

    PodPlumbing(Sandbox sandbox, List<SandboxNode> nodes, CommandRunner host) throws IOException {
        this.sandbox = sandbox;
        this.nodes = List.copyOf(nodes);
        this.host = host;
        for (SandboxNode node : nodes) {
            Cgroups.create(node.cgroup());
        }
        for (Sandbox.PodRecord r : sandbox.pods()) { // a restarted daemon takes over what is there
            built.put(r.pod(), r);
            nextIndex = Math.max(nextIndex, r.index() + 1);
        }
    }

    /** Makes the built pods those of {@code state}: each on its node, a pod on a node not the sandbox's nowhere. */
    void reconcile(ClusterState state) {
        Map<String, Pod> wanted = new LinkedHashMap<>();
        for (Pod pod : state.pods().values()) {
            if (pod.policyEndpoint() && !pod.ips().isEmpty() && node(pod.nodeName()) != null) {
                wanted.put(pod.key().toString(), pod);
            }
        }
        for (Sandbox.PodRecord r : new ArrayList<>(built.values())) {
            Pod pod = wanted.get(r.pod());
            if (pod == null || !r.ips().equals(texts(pod.ips())) || !r.served().equals(served(pod)) || !home(r).name().equals(pod.nodeName())) {
                destroy(r);
                built.remove(r.pod());
            }
        }
        wanted.forEach((key, pod) -> {
            if (!built.containsKey(key)) {
                built.put(key, build(pod, nextIndex++));
            }
        });
        try {
            sandbox.writePods(new ArrayList<>(built.values()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private String nodeCongestionControl(String node) {
        CommandResult r = host.run(List.of("ip", "netns", "exec", node, "sysctl", "-n", "net.ipv4.tcp_congestion_control"), "", TIMEOUT);
        if (!r.ok()) {
            throw new IllegalStateException("cannot read the node's congestion control: " + r.errorSummary());
        }
        return r.stdout().strip();
    }

    /** The sandbox's node of that name, or null. */
    private SandboxNode node(String name) {
        return nodes.stream().filter(n -> n.name().equals(name)).findFirst().orElse(null);
    }

    /** The node a built pod is on (a record of an older version names none: node 0). */
    private SandboxNode home(Sandbox.PodRecord r) {
        SandboxNode node = r.node() == null ? null : node(r.node());
        return node == null ? nodes.get(0) : node;
    }

    private Sandbox.PodRecord build(Pod pod, int index) {
        SandboxNode home = node(pod.nodeName());
        NetworkNamespace node = home.namespace();
        NetworkNamespace ns = NetworkNamespace.create(sandbox.podNetns(index));
        // A new namespace takes the host's default congestion control; the node's namespace stands in for
        // the host here (where the agent's --bbr sets it).
        ns.must("sysctl", "-qw", "net.ipv4.tcp_congestion_control=" + nodeCongestionControl(node.name()));
        PodLink.routed(node, "veth" + index, ns, pod.ips());
        SandboxUnderlay.addPod(nodes, home, texts(pod.ips()));
        Path cgroup = PodCgroups.ofPod(home.cgroup(), index);
        try {
            Cgroups.create(cgroup);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the cgroup of pod " + pod.key(), e);
        }
        Sandbox.PodRecord record = new Sandbox.PodRecord(pod.key().toString(), home.name(), ns.name(), index, texts(pod.ips()), served(pod), 0,
                cgroup.toString());
        long pid = record.served().isEmpty() ? 0 : startServer(record);
        LOG.log(System.Logger.Level.INFO, "pod {0}: {1} on {2} {3} serving {4}", pod.key(), ns, home.name(), pod.ips(), record.served());
        return new Sandbox.PodRecord(record.pod(), home.name(), ns.name(), index, record.ips(), record.served(), pid, record.cgroup());
    }

    /** The pod's server, in its namespace and cgroup, in a session of its own (it outlives this daemon's restarts). */
    private long startServer(Sandbox.PodRecord pod) {
        String ns = pod.netns();
        try {
            Path script = sandbox.script("podserver.py");
            Path ready = sandbox.dir().resolve(ns + ".ready");
            Files.deleteIfExists(ready);
            List<String> server = new ArrayList<>(List.of("python3", script.toString(), ready.toString()));
            server.addAll(pod.served());
            Daemon d = Daemon.of("the server in " + ns, sandbox.dir().resolve("servers.log"), server)
                    .inCgroup(Path.of(pod.cgroup())).inNetns(ns).detached().start();
            d.awaitReady(Duration.ofSeconds(10), "listening", () -> Files.exists(ready));
            Files.delete(ready);
            return d.pid();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void destroy(Sandbox.PodRecord r) {
        kill(r.serverPid(), "podserver.py");
        host.run(List.of("ip", "netns", "del", r.netns()), "", TIMEOUT);
        SandboxUnderlay.removePod(nodes, home(r), r.ips());
        if (r.cgroup() != null) {
            try {
                Cgroups.remove(Path.of(r.cgroup()), Duration.ofSeconds(5));
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, "pod {0}: {1}", r.pod(), e.getMessage());
            }
        }
        LOG.log(System.Logger.Level.INFO, "pod {0}: removed {1}", r.pod(), r.netns());
    }

    /** Kills {@code pid} if it is still the process we started (its command line names {@code marker}). */
    static void kill(long pid, String marker) {
        if (pid <= 0) {
            return;
        }
        ProcessHandle.of(pid).ifPresent(h -> {
            String cmd = SandboxLifecycle.commandLine(pid).orElse("");
            if (cmd.contains(marker)) {
                h.descendants().forEach(ProcessHandle::destroyForcibly);
                h.destroyForcibly();
            }
        });
    }

    /** The ports a pod's server listens on, as {@code tcp:80}, sorted; SCTP cannot be served here. */
    static List<String> served(Pod pod) {
        TreeSet<String> out = new TreeSet<>();
        for (ContainerPort p : pod.ports()) {
            if (p.protocol() != Protocol.SCTP) {
                out.add(p.protocol().name().toLowerCase(Locale.ROOT) + ":" + p.port());
            }
        }
        return new ArrayList<>(out);
    }

    private static List<String> texts(List<IpAddress> ips) {
        return ips.stream().map(IpAddress::toString).toList();
    }

}
