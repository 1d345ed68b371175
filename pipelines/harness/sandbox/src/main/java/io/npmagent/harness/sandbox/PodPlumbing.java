package io.npmagent.harness.sandbox;

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
import java.time.Instant;
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
        PodCgroups.create(cgroups);
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
        String ns = sandbox.podNetns(index);
        String node = sandbox.nodeNetns();
        String veth = "veth" + index;
        must("ip", "netns", "add", ns);
        // A new namespace takes the host's default congestion control; the node's namespace stands in for
        // the host here (where the agent's --bbr sets it).
        must("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0",
                "net.ipv4.tcp_congestion_control=" + nodeCongestionControl(node));
        must("ip", "-n", ns, "link", "set", "lo", "up");
        must("ip", "-n", node, "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns);
        boolean v4 = false;
        boolean v6 = false;
        for (IpAddress ip : pod.ips()) {
            if (ip.v6()) {
                must("ip", "-n", ns, "-6", "addr", "add", ip + "/128", "dev", "eth0", "nodad");
                v6 = true;
            } else {
                must("ip", "-n", ns, "addr", "add", ip + "/32", "dev", "eth0");
                v4 = true;
            }
        }
        must("ip", "-n", ns, "link", "set", "eth0", "up");
        must("ip", "-n", node, "addr", "add", "169.254.1.1/32", "dev", veth);
        must("ip", "-n", node, "-6", "addr", "add", "fe80::1/64", "dev", veth, "nodad");
        must("ip", "-n", node, "link", "set", veth, "up");
        if (v4) {
            must("ip", "-n", ns, "route", "add", "169.254.1.1", "dev", "eth0", "scope", "link");
            must("ip", "-n", ns, "route", "add", "default", "via", "169.254.1.1", "dev", "eth0");
        }
        if (v6) {
            must("ip", "-n", ns, "-6", "route", "add", "default", "via", "fe80::1", "dev", "eth0");
        }
        for (IpAddress ip : pod.ips()) {
            must("ip", "-n", node, ip.v6() ? "-6" : "-4", "route", "add", ip + "/" + ip.bitLength(), "dev", veth);
        }
        Path cgroup = PodCgroups.ofPod(cgroups, index);
        try {
            PodCgroups.create(cgroup);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the cgroup of pod " + pod.key(), e);
        }
        Sandbox.PodRecord record = new Sandbox.PodRecord(pod.key().toString(), ns, index, texts(pod.ips()), served(pod), 0, cgroup.toString());
        long pid = record.served().isEmpty() ? 0 : startServer(record);
        LOG.log(System.Logger.Level.INFO, "pod {0}: {1} {2} serving {3}", pod.key(), ns, pod.ips(), record.served());
        return new Sandbox.PodRecord(record.pod(), ns, index, record.ips(), record.served(), pid, record.cgroup());
    }

    private long startServer(Sandbox.PodRecord pod) {
        String ns = pod.netns();
        try {
            Path script = sandbox.script("podserver.py");
            Path ready = sandbox.dir().resolve(ns + ".ready");
            Files.deleteIfExists(ready);
            List<String> server = new ArrayList<>(List.of("python3", script.toString(), ready.toString()));
            server.addAll(pod.served());
            List<String> argv = new ArrayList<>(List.of("setsid"));
            argv.addAll(pod.command(server));
            Process p = new ProcessBuilder(argv)
                    .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(sandbox.dir().resolve("servers.log").toFile()))
                    .redirectErrorStream(true)
                    .start();
            Instant deadline = Instant.now().plusSeconds(10);
            while (!Files.exists(ready)) {
                if (!p.isAlive() || Instant.now().isAfter(deadline)) {
                    throw new IllegalStateException("the server in " + ns + " did not start (see " + sandbox.dir().resolve("servers.log") + ")");
                }
                Thread.sleep(20);
            }
            Files.delete(ready);
            return p.pid();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private void destroy(Sandbox.PodRecord r) {
        kill(r.serverPid(), "podserver.py");
        host.run(List.of("ip", "netns", "del", r.netns()), "", TIMEOUT);
        if (r.cgroup() != null) {
            try {
                PodCgroups.remove(Path.of(r.cgroup()), Duration.ofSeconds(5));
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

    private void must(String... argv) {
        CommandResult r = host.run(List.of(argv), "", TIMEOUT);
        if (!r.ok()) {
            throw new IllegalStateException(String.join(" ", argv) + ": " + r.errorSummary());
        }
    }
}
