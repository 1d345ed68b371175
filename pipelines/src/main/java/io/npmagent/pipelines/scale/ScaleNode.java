package io.npmagent.pipelines.scale;

import io.npmagent.bpf.libbpf.NetnsThread;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.harness.node.Bpffs;
import io.npmagent.harness.node.NetworkNamespace;
import io.npmagent.harness.node.PodLink;
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
public final class ScaleNode implements AutoCloseable {
    static final int PROBE_PORT = 8080;

    private final NetworkNamespace node;
    private final List<NetworkNamespace> pods = new ArrayList<>();
    private final Path bpffs;
    private ServerSocket listener;
    private Thread acceptor;
    private NetnsThread clientThread;

    /** @param localPodIps the addresses of the local pods that get an interface (not the two probe pods) */
    public ScaleNode(String name, List<String> localPodIps, String clientIp, String serverIp) {
        this.node = NetworkNamespace.create(name + "-node").forwarding();
        // Never the host's /sys/fs/bpf.
        this.bpffs = Path.of("/run/npm-agent", name + "-bpffs");
        try {
            Bpffs.mount(bpffs, "scale");
            PodLink.placeholders(node, "l", localPodIps);
            NetworkNamespace client = realPod(name + "-client", "vcl", clientIp);
            NetworkNamespace server = realPod(name + "-server", "vsv", serverIp);
            startListener(server.name(), serverIp);
            clientThread = NetnsThread.enter(client.name());
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    public String netns() {
        return node.name();
    }

    public Path bpffs() {
        return bpffs;
    }

    /** Whether a TCP connection from the client pod to the server pod opens within {@code timeout}. */
    public boolean connects(String serverIp, Duration timeout) {
        return clientThread.get(() -> {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(InetAddress.getByName(serverIp), PROBE_PORT), (int) timeout.toMillis());
                return true;
            } catch (IOException e) {
                return false;
            }
        });
    }

    /** A pod as the sandbox builds one: routed, its address a /32 behind a veth to the node. */
    private NetworkNamespace realPod(String name, String veth, String ip) {
        NetworkNamespace pod = NetworkNamespace.create(name);
        pods.add(pod);
        PodLink.routed(node, veth, pod, List.of(IpAddress.parse(ip)));
        return pod;
    }

    private void startListener(String server, String ip) {
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
            pods.forEach(NetworkNamespace::close);
            node.close();
            Bpffs.unmount(bpffs);
        }
    }

}
