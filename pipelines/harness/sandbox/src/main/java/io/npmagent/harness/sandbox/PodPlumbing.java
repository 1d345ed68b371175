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
 * Builds the sandbox's pods as a CNI and a container runtime would: for each live pod-network pod with
 * an address, a network namespace joined to the node's by a veth pair ({@code eth0} in the pod,
 * {@code veth<n>} in the node), its addresses (/32, /128), a default route via the node
 * ({@code 169.254.1.1}, {@code fe80::1}, as Calico does) and the node's host routes back, and a server on
 * every declared TCP and UDP port, started in a cgroup of the pod's own ({@link PodCgroups}). A pod that
 * goes, or changes address or ports, is torn down (and built again). Host-network and terminal pods get
 * nothing; SCTP ports are not served (no SCTP sockets).
 *
 * <p>Every command names its namespace ({@code ip -n}), so it works from any namespace and changes
 * nothing outside the sandbox's own.
 */
final class PodPlumbing {
    private static final System.Logger LOG = System.getLogger(PodPlumbing.class.getName());
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final Sandbox sandbox;
    private final CommandRunner host;
    private final Path cgroups;
    private final Map<String, Sandbox.PodRecord> built = new LinkedHashMap<>();
    private int nextIndex = 1;

    PodPlumbing(Sandbox sandbox, CommandRunner host) throws IOException {
        this.sandbox = sandbox;
        this.host = host;
        this.cgroups = PodCgroups.of(sandbox);
        Cgroups.create(cgroups);
        for (Sandbox.PodRecord r : sandbox.pods()) { // a restarted daemon takes over what is there
            built.put(r.pod(), r);
            nextIndex = Math.max(nextIndex, r.index() + 1);
        }
    }

    /** Makes the built pods those of {@code state}. */
    void reconcile(ClusterState state) {
        Map<String, Pod> wanted = new LinkedHashMap<>();
        for (Pod pod : state.pods().values()) {
            if (pod.policyEndpoint() && !pod.ips().isEmpty()) {
                wanted.put(pod.key().toString(), pod);
            }
        }
        for (Sandbox.PodRecord r : new ArrayList<>(built.values())) {
            Pod pod = wanted.get(r.pod());
            if (pod == null || !r.ips().equals(texts(pod.ips())) || !r.served().equals(served(pod))) {
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

    private Sandbox.PodRecord build(Pod pod, int index) {
        NetworkNamespace node = NetworkNamespace.existing(sandbox.nodeNetns());
        NetworkNamespace ns = NetworkNamespace.create(sandbox.podNetns(index));
        // A new namespace takes the host's default congestion control; the node's namespace stands in for
        // the host here (where the agent's --bbr sets it).
        ns.must("sysctl", "-qw", "net.ipv4.tcp_congestion_control=" + nodeCongestionControl(node.name()));
        PodLink.routed(node, "veth" + index, ns, pod.ips());
        Path cgroup = PodCgroups.ofPod(cgroups, index);
        try {
            Cgroups.create(cgroup);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the cgroup of pod " + pod.key(), e);
        }
        Sandbox.PodRecord record = new Sandbox.PodRecord(pod.key().toString(), ns.name(), index, texts(pod.ips()), served(pod), 0, cgroup.toString());
        long pid = record.served().isEmpty() ? 0 : startServer(record);
        LOG.log(System.Logger.Level.INFO, "pod {0}: {1} {2} serving {3}", pod.key(), ns, pod.ips(), record.served());
        return new Sandbox.PodRecord(record.pod(), ns.name(), index, record.ips(), record.served(), pid, record.cgroup());
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
