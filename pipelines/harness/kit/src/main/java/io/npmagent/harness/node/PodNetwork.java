package io.npmagent.harness.node;

import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.harness.process.Await;
import io.npmagent.harness.process.Daemon;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * A node and its pods, each a network namespace: pod {@code i} has {@code 10.99.0.i/32} and
 * {@code fd99::i/128} on {@code eth0}, the other end of a veth pair in the node, and routes everything
 * via the node ({@code 169.254.1.1} and {@code fe80::1}, which every node-side veth carries, as Calico
 * does). The node forwards and has a host route to each pod, so pod-to-pod traffic crosses the node's
 * forward hook, where the backend under test judges it. Each pod runs a TCP server on {@link #PORT}
 * that accepts and closes, dual stack: a few lines of Python, not iperf3, whose server refuses or resets
 * connections that arrive between two of its tests, which parallel probes do. Closing kills the servers
 * and deletes every namespace, whatever state setup reached.
 *
 * <p>{@link #createBridged} lays the pods out as the CNI bridge plugin does instead: every pod's veth a
 * port of one bridge ({@code npmbr0}, {@code 10.99.0.254/24} and {@code fd99::fe/64}, the pods' gateway),
 * the pods' addresses in that subnet, and the kernel handing bridged packets to netfilter
 * (br_netfilter), as kube-proxy requires. Pod-to-pod traffic is then bridged, and traffic to a
 * Service is routed in and out of the bridge itself, not of a pod's interface.
 */
public final class PodNetwork implements AutoCloseable {
    public static final int PORT = 5201;
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);
    /** The echo server's port: a connection there stays open and answers what it is sent. */
    public static final int ECHO_PORT = 5202;
    /**
     * Accepts every connection on {@link #PORT} on both families and closes it (a connect either
     * completes or times out); on {@link #ECHO_PORT}, echoes what each connection sends, until it closes.
     */
    private static final String SERVER = String.join("\n",
            "import socket, threading",
            "def echo(c):",
            "    with c:",
            "        while True:",
            "            d = c.recv(4096)",
            "            if not d:",
            "                return",
            "            c.sendall(d)",
            "def echoes():",
            "    e = socket.create_server(('::', " + ECHO_PORT + "), family=socket.AF_INET6, dualstack_ipv6=True, backlog=1024)",
            "    while True:",
            "        c, _ = e.accept()",
            "        threading.Thread(target=echo, args=(c,), daemon=True).start()",
            "threading.Thread(target=echoes, daemon=True).start()",
            "s = socket.create_server(('::', " + PORT + "), family=socket.AF_INET6, dualstack_ipv6=True, backlog=65535)",
            "while True:",
            "    c, _ = s.accept()",
            "    c.close()");
    /** Connects to the echo server, says so, then per line read sends a byte and says whether it came back within 2 s. */
    private static final String HOLDER = String.join("\n",
            "import socket, sys",
            "s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2)",
            "print('connected', flush=True)",
            "for line in sys.stdin:",
            "    try:",
            "        s.sendall(b'x')",
            "        ok = s.recv(1) == b'x'",
            "    except OSError:",
            "        ok = False",
            "    print('echo' if ok else 'silent', flush=True)");

    private static final IpAddress REMOTE_V4 = IpAddress.parse("10.99.1.1");
    private static final IpAddress REMOTE_V6 = IpAddress.parse("fd99:1::1");
    private static final String BRIDGE = "npmbr0";
    private static final IpAddress NODE_V4 = IpAddress.parse("10.99.2.1");
    private static final IpAddress NODE_V6 = IpAddress.parse("fd99:2::1");

    private final NetworkNamespace node;
    private final Map<String, NetworkNamespace> pods = new LinkedHashMap<>();
    private final Map<String, Integer> index = new LinkedHashMap<>();
    /** The servers' logs. */
    private final Path logs;
    private final List<Daemon> servers = new ArrayList<>();
    /** The other node's pod, once {@link #remote} made it. */
    private NetworkNamespace remote;
    /** Whether {@link #nodeAddress} gave the node its addresses and server. */
    private boolean nodeServing;
    private final boolean bridged;

    /** One probe: from a pod to another pod's address. */
    public record Pair(String from, String to, boolean v6) implements Comparable<Pair> {
        @Override
        public int compareTo(Pair o) {
            return toString().compareTo(o.toString());
        }

        @Override
        public String toString() {
            return from + "->" + to + (v6 ? " v6" : " v4");
        }
    }

    private PodNetwork(NetworkNamespace node, Path logs, boolean bridged) {
        this.node = node;
        this.logs = logs;
        this.bridged = bridged;
    }

    /** Builds the node and one pod per name, numbered from 1 in order, each on its own routed veth. */
    public static PodNetwork create(String... podNames) {
        return create(false, podNames);
    }

    /** Builds the node and one pod per name, numbered from 1 in order, on one bridge (as the CNI bridge plugin). */
    public static PodNetwork createBridged(String... podNames) {
        return create(true, podNames);
    }

    private static PodNetwork create(boolean bridged, String... podNames) {
        Path dir;
        try {
            dir = Files.createTempDirectory("npm-pods");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        PodNetwork net = new PodNetwork(NetworkNamespace.forTest("node").forwarding(), dir, bridged);
        try {
            if (bridged) {
                PodLink.bridge(net.node, BRIDGE, List.of("10.99.0.254/24", "fd99::fe/64"));
            }
            for (int i = 0; i < podNames.length; i++) {
                net.addPod(podNames[i], i + 1);
            }
            net.awaitServers();
            return net;
        } catch (RuntimeException | Error e) {
            net.close();
            throw e;
        }
    }

    public static IpAddress v4(int i) {
        return IpAddress.parse("10.99.0." + i);
    }

    public static IpAddress v6(int i) {
        return IpAddress.parse("fd99::" + i);
    }

    private void addPod(String name, int i) {
        NetworkNamespace pod = NetworkNamespace.forTest("p" + name);
        pods.put(name, pod);
        index.put(name, i);
        String veth = "vnp" + i;
        if (bridged) {
            PodLink.bridged(node, veth, BRIDGE, pod, List.of(v4(i) + "/24", v6(i) + "/64"), List.of("10.99.0.254", "fd99::fe"));
        } else {
            PodLink.routed(node, veth, pod, List.of(v4(i), v6(i)));
        }
        // somaxconn: probes connect thousands of times a second, and on a busy machine the server's accept
        // loop falls behind; a full accept queue drops SYNs, which would read as a policy's denial.
        pod.must("sysctl", "-qw", "net.core.somaxconn=65535");
        startServer(name, pod);
    }

    private void startServer(String name, NetworkNamespace pod) {
        try {
            servers.add(Daemon.of("server in " + name, logs.resolve(name + ".log"), List.of("python3", "-c", SERVER)).inNetns(pod.name()).start());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the server in pod " + name + " (python3 is needed)", e);
        }
    }

    /**
     * The address (IPv4, or IPv6) of a pod on another node: a namespace with the same servers behind an
     * uplink of the node, routed by prefix (10.99.1.0/24, fd99:1::/64) as a remote node's pod range is,
     * not by a host route to a pod interface. Made on first use.
     */
    public IpAddress remote(boolean v6) {
        if (remote == null) {
            remote = NetworkNamespace.forTest("remote");
            PodLink.routed(node, "vnpup", remote, List.of(REMOTE_V4, REMOTE_V6), List.of("10.99.1.0/24", "fd99:1::/64"));
            startServer("remote", remote);
            await(List.of(REMOTE_V4, REMOTE_V6));
        }
        return v6 ? REMOTE_V6 : REMOTE_V4;
    }

    /**
     * An address (IPv4, or IPv6) of the node itself, where the node runs the same servers as a pod does (a
     * host-network pod, or kubelet's own port): on the node's loopback (this kernel has no dummy
     * interfaces), with global scope as a node's address on its uplink has, so a pod's connection to it is
     * delivered locally, never forwarded. Made on
     * first use, before a backend reads the node's addresses.
     */
    public IpAddress nodeAddress(boolean v6) {
        if (!nodeServing) {
            node.must("ip", "addr", "add", NODE_V4 + "/32", "dev", "lo");
            node.must("ip", "addr", "add", NODE_V6 + "/128", "dev", "lo");
            startServer("node", node);
            nodeServing = true;
            await(List.of(NODE_V4, NODE_V6));
        }
        return v6 ? NODE_V6 : NODE_V4;
    }

    /** Whether a TCP connection from the node itself to pod {@code to} (IPv4, or IPv6) opens, as kubelet's probes do. */
    public boolean nodeConnects(String to, boolean v6) {
        return connects(node, address(to, v6));
    }

    /** Waits until every server answers from the node (output path: the forward hook is not involved). */
    private void awaitServers() {
        List<IpAddress> all = new ArrayList<>();
        for (int i : index.values()) {
            all.add(v4(i));
            all.add(v6(i));
        }
        await(all);
    }

    private void await(List<IpAddress> addresses) {
        for (IpAddress ip : addresses) {
            Await.until(Duration.ofSeconds(10), "the server at " + ip, () -> connects(node, ip),
                    () -> servers.stream().filter(d -> !d.alive()).map(Daemon::died).findFirst().orElse(""));
        }
    }

    /**
     * Forgets what the node learned of its bridged pods (the bridge's neighbour entries and forwarding
     * database), as on a node where pods talked only to each other: the kernel learns neither from that.
     */
    public void forgetNeighbours() {
        node.must("ip", "neigh", "flush", "dev", BRIDGE);
        node.must("ip", "link", "set", BRIDGE, "type", "bridge", "fdb_flush");
    }

    /** The node's end of the pod's veth. */
    public String hostInterface(String pod) {
        return "vnp" + index.get(pod);
    }

    public NetworkNamespace node() {
        return node;
    }

    /** The network namespace of pod {@code name}. */
    public NetworkNamespace pod(String name) {
        return pods.get(name);
    }

    /** Tries every ordered pair of pods on both families, in parallel; true where TCP connected. */
    public Map<Pair, Boolean> probeAll() {
        List<Pair> pairs = new ArrayList<>();
        for (String from : pods.keySet()) {
            for (String to : pods.keySet()) {
                if (!from.equals(to)) {
                    pairs.add(new Pair(from, to, false));
                    pairs.add(new Pair(from, to, true));
                }
            }
        }
        ExecutorService pool = Executors.newFixedThreadPool(pairs.size());
        try {
            Map<Pair, Future<Boolean>> futures = new LinkedHashMap<>();
            for (Pair p : pairs) {
                futures.put(p, pool.submit(() -> connects(pods.get(p.from()), address(p.to(), p.v6()))));
            }
            Map<Pair, Boolean> out = new TreeMap<>();
            for (Map.Entry<Pair, Future<Boolean>> e : futures.entrySet()) {
                out.put(e.getKey(), e.getValue().get());
            }
            return out;
        } catch (Exception e) {
            throw new IllegalStateException("probe failed", e);
        } finally {
            pool.shutdownNow();
        }
    }

    public IpAddress address(String pod, boolean v6) {
        int i = index.get(pod);
        return v6 ? v6(i) : v4(i);
    }

    /** Whether a TCP connection from pod {@code from} to pod {@code to} (IPv4, or IPv6) opens. */
    public boolean connects(String from, String to, boolean v6) {
        return connects(pods.get(from), address(to, v6));
    }

    /** Whether a TCP connection from pod {@code from} to {@code to} on {@link #PORT} opens (a Service address, say). */
    public boolean connectsTo(String from, IpAddress to) {
        return connects(pods.get(from), to);
    }

    /**
     * Whether a TCP connection from pod {@code from}, bound to {@code sourcePort}, to pod {@code to} opens;
     * it is closed with a RST (SO_LINGER 0), which leaves no TIME_WAIT, so the same tuple can open again at
     * once: a client reusing a source port, as clients do within seconds.
     */
    public boolean connectsFromPort(String from, String to, boolean v6, int sourcePort) {
        String script = String.join("\n",
                "import socket, struct, sys",
                "dst, port, sport, timeout = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])",
                "s = socket.socket(socket.AF_INET6 if ':' in dst else socket.AF_INET, socket.SOCK_STREAM)",
                "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)",
                "s.bind(('', sport))",
                "s.settimeout(timeout)",
                "try:",
                "    s.connect((dst, port))",
                "    ok = True",
                "except socket.timeout:",
                "    ok = False",
                "s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))",
                "s.close()",
                "sys.exit(0 if ok else 3)");
        var r = pods.get(from).run("python3", "-c", script, address(to, v6).toString(), Integer.toString(PORT),
                Integer.toString(sourcePort), Long.toString(PROBE_TIMEOUT.toSeconds()));
        if (r.exitCode() != 0 && r.exitCode() != 3) {
            throw new IllegalStateException("connect from " + from + " port " + sourcePort + " failed: " + r.errorSummary());
        }
        return r.exitCode() == 0;
    }

    /**
     * {@code count} new TCP connections from pod {@code from} to {@code to} on ports {@code firstPort} to
     * {@code firstPort + ports - 1} in turn, each from a new source port, each given up right after its SYN
     * left (non-blocking connect, then close): a client's retries, or a scan, without waiting for
     * answers. Returns once all SYNs are sent.
     */
    public void attempts(String from, IpAddress to, int firstPort, int ports, int count) {
        String script = String.join("\n",
                "import socket, sys",
                "dst, first, ports, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])",
                "family = socket.AF_INET6 if ':' in dst else socket.AF_INET",
                "for i in range(count):",
                "    s = socket.socket(family, socket.SOCK_STREAM)",
                "    s.setblocking(False)",
                "    try:",
                "        s.connect((dst, first + i % ports))",
                "    except BlockingIOError:",
                "        pass",
                "    s.close()");
        var r = pods.get(from).run("python3", "-c", script, to.toString(), Integer.toString(firstPort), Integer.toString(ports),
                Integer.toString(count));
        if (r.exitCode() != 0) {
            throw new IllegalStateException("connection attempts from " + from + " failed: " + r.errorSummary());
        }
    }

    /**
     * A TCP connection from pod {@code from} to {@code to}'s echo server ({@link #ECHO_PORT}: a pod, or a
     * Service address), held open until closed: whether an established flow survives a change.
     */
    public OpenConnection open(String from, IpAddress to) {
        try {
            Process p = new ProcessBuilder("ip", "netns", "exec", pods.get(from).name(), "python3", "-c", HOLDER, to.toString(),
                    Integer.toString(ECHO_PORT)).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            OpenConnection c = new OpenConnection(p);
            if (!"connected".equals(c.line())) {
                c.close();
                throw new IllegalStateException(from + " could not connect to " + to + " port " + ECHO_PORT);
            }
            return c;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A connection held open by a client process in a pod. */
    public static final class OpenConnection implements AutoCloseable {
        private final Process process;
        private final BufferedReader out;

        private OpenConnection(Process process) {
            this.process = process;
            this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        }

        /** Sends a byte on the open connection: whether it comes back within 2 s. */
        public boolean echoes() {
            try {
                process.getOutputStream().write('\n');
                process.getOutputStream().flush();
                return "echo".equals(line());
            } catch (IOException e) {
                return false; // the client is gone
            }
        }

        private String line() throws IOException {
            return out.readLine();
        }

        @Override
        public void close() {
            process.destroyForcibly();
            try {
                process.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** A TCP connect within {@link #PROBE_TIMEOUT}: a dropped SYN is a timeout. */
    private static boolean connects(NetworkNamespace from, IpAddress to) {
        return from.run("timeout", Long.toString(PROBE_TIMEOUT.toSeconds()), "bash", "-c",
                "</dev/tcp/" + to + "/" + PORT).ok();
    }

    @Override
    public void close() {
        // The servers first (they would keep their namespaces' sockets), then the namespaces, whatever setup reached.
        servers.forEach(d -> d.stop(Duration.ofSeconds(2)));
        pods.values().forEach(NetworkNamespace::close);
        if (remote != null) {
            remote.close();
        }
        node.close();
        try (var files = Files.list(logs)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f);
            }
            Files.deleteIfExists(logs);
        } catch (IOException e) {
            // A leftover temp directory of logs is harmless.
        }
    }
}
