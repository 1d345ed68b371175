package io.npmagent.pipelines.scale;

import io.npmagent.bpf.libbpf.NetnsThread;
import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.ProcessRunner;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The node a scale run enforces on, in network namespaces of its own: the node's (forwarding on, a
 * bpffs of its own for the eBPF backend), an interface and host route for each local pod as a routed
 * CNI leaves them (both veth ends in the node: the agent's work is the same, and a thousand pods cost no
 * thousand namespaces), and two real pods, a client and a server with a TCP listener, between which
 * packets decide whether a change is enforced.
 */
final class ScaleNode implements AutoCloseable {
    static final int PROBE_PORT = 8080;
    private static final Duration TIMEOUT = Duration.ofMinutes(2);

    private final String node;
    private final String client;
    private final String server;
    private final Path bpffs;
    private final ProcessRunner host = ProcessRunner.host();
    private final List<String> made = new ArrayList<>();
    private ServerSocket listener;
    private Thread acceptor;
    private NetnsThread clientThread;

    /** @param localPodIps the addresses of the local pods that get an interface (not the two probe pods) */
    ScaleNode(String name, List<String> localPodIps, String clientIp, String serverIp) {
        this.node = name + "-node";
        this.client = name + "-client";
        this.server = name + "-server";
        this.bpffs = Path.of("/run/npm-agent", name + "-bpffs");
        try {
            must("ip", "netns", "add", node);
            made.add(node);
            must("ip", "netns", "exec", node, "sysctl", "-qw", "net.ipv4.ip_forward=1");
            must("ip", "-n", node, "link", "set", "lo", "up");
            must("mkdir", "-p", bpffs.toString());
            must("mount", "-t", "bpf", "scale", bpffs.toString());
            pseudoPods(localPodIps);
            realPod(client, "vcl", clientIp);
            realPod(server, "vsv", serverIp);
            startListener(serverIp);
            clientThread = NetnsThread.enter(client);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    String netns() {
        return node;
    }

    Path bpffs() {
        return bpffs;
    }

    /** Whether a TCP connection from the client pod to the server pod opens within {@code timeout}. */
    boolean connects(String serverIp, Duration timeout) {
        return clientThread.get(() -> {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(InetAddress.getByName(serverIp), PROBE_PORT), (int) timeout.toMillis());
                return true;
            } catch (IOException e) {
                return false;
            }
        });
    }

    private void pseudoPods(List<String> ips) {
        StringBuilder batch = new StringBuilder();
        for (int k = 0; k < ips.size(); k++) {
            batch.append("link add lp").append(k).append(" type veth peer name lq").append(k).append('\n');
            batch.append("link set lp").append(k).append(" up\n");
            batch.append("link set lq").append(k).append(" up\n");
            batch.append("route add ").append(ips.get(k)).append("/32 dev lp").append(k).append('\n');
        }
        CommandResult r = ProcessRunner.inNamespace(node).run(List.of("ip", "-batch", "-"), batch.toString(), TIMEOUT);
        if (!r.ok()) {
            throw new IllegalStateException("cannot create the local pods' interfaces: " + r.errorSummary());
        }
    }

    /** A pod as the sandbox builds one: its namespace, a veth to the node, a /32 and a default route via 169.254.1.1. */
    private void realPod(String ns, String veth, String ip) {
        must("ip", "netns", "add", ns);
        made.add(ns);
        must("ip", "-n", ns, "link", "set", "lo", "up");
        must("ip", "-n", node, "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns);
        must("ip", "-n", ns, "addr", "add", ip + "/32", "dev", "eth0");
        must("ip", "-n", ns, "link", "set", "eth0", "up");
        must("ip", "-n", node, "addr", "add", "169.254.1.1/32", "dev", veth);
        must("ip", "-n", node, "link", "set", veth, "up");
        must("ip", "-n", ns, "route", "add", "169.254.1.1", "dev", "eth0", "scope", "link");
        must("ip", "-n", ns, "route", "add", "default", "via", "169.254.1.1", "dev", "eth0");
        must("ip", "-n", node, "route", "add", ip + "/32", "dev", veth);
    }

    private void startListener(String ip) {
        try (NetnsThread inServer = NetnsThread.enter(server)) {
            listener = inServer.call(() -> new ServerSocket(PROBE_PORT, 512, InetAddress.getByName(ip)));
        } catch (Exception e) {
            throw new IllegalStateException("cannot listen in the server pod", e);
        }
        acceptor = new Thread(() -> {
            while (!listener.isClosed()) {
                try (Socket s = listener.accept()) {
                    // accepted: that is all a probe asks
                } catch (IOException closed) {
                    return;
                }
            }
        }, "scale-probe-server");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    @Override
    public void close() {
        try {
            if (listener != null) {
                listener.close();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            if (clientThread != null) {
                clientThread.close();
            }
            for (String ns : made) {
                host.run(List.of("ip", "netns", "del", ns), "", TIMEOUT);
            }
            host.run(List.of("umount", bpffs.toString()), "", TIMEOUT);
            host.run(List.of("rmdir", bpffs.toString()), "", TIMEOUT);
        }
    }

    private void must(String... argv) {
        CommandResult r = host.run(List.of(argv), "", TIMEOUT);
        if (!r.ok()) {
            throw new IllegalStateException(String.join(" ", argv) + ": " + r.errorSummary());
        }
    }
}
