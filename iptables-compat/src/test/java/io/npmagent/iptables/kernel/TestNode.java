package io.npmagent.iptables.kernel;

import io.npmagent.iptables.exec.CommandResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A node and its pods, in network namespaces: each pod namespace is joined to the node namespace by a
 * veth pair, with a /32 (and /128) address and a default route via the node, which forwards between
 * them. Each pod runs a TCP server ({@code iperf3 -s}) on {@link #PORT}. Packets between pods cross the
 * node's FORWARD hook, where the backend under test enforces. Closing removes every namespace and,
 * with them, the servers' network; the servers themselves are killed by pid.
 */
public final class TestNode implements AutoCloseable {
    public static final int PORT = 5201;

    private final Netns node;
    private final Map<String, Netns> pods = new LinkedHashMap<>();
    private final Map<String, String> ipv4 = new LinkedHashMap<>();
    private final Map<String, String> ipv6 = new LinkedHashMap<>();
    private final List<String> pidFiles = new ArrayList<>();

    private TestNode(Netns node) {
        this.node = node;
    }

    /** A node with a pod per name; pod i gets 10.99.0.(i+1) and fd99::(i+1). */
    public static TestNode create(String... podNames) {
        KernelTestSupport.require("iperf3");
        TestNode t = new TestNode(Netns.create("node"));
        try {
            t.node.must("sysctl", "-qw", "net.ipv4.ip_forward=1");
            t.node.must("sysctl", "-qw", "net.ipv6.conf.all.forwarding=1");
            for (int i = 0; i < podNames.length; i++) {
                t.addPod(podNames[i], i + 1);
            }
        } catch (RuntimeException | AssertionError e) {
            t.close();
            throw e;
        }
        return t;
    }

    private void addPod(String name, int n) {
        Netns pod = Netns.create("p" + n);
        pods.put(name, pod);
        String v4 = "10.99.0." + n;
        String v6 = "fd99::" + n;
        ipv4.put(name, v4);
        ipv6.put(name, v6);
        String hostSide = "npmt" + n + "h";
        node.must("ip", "link", "add", hostSide, "type", "veth", "peer", "name", "eth0", "netns", pod.name());
        node.must("ip", "link", "set", hostSide, "up");
        node.must("ip", "addr", "add", "169.254.1.1/32", "dev", hostSide);
        node.must("ip", "route", "add", v4 + "/32", "dev", hostSide);
        node.must("ip", "-6", "addr", "add", "fe80::1/64", "dev", hostSide, "nodad");
        node.must("ip", "-6", "route", "add", v6 + "/128", "dev", hostSide);
        pod.must("ip", "link", "set", "eth0", "up");
        pod.must("ip", "addr", "add", v4 + "/32", "dev", "eth0");
        pod.must("ip", "route", "add", "169.254.1.1", "dev", "eth0");
        pod.must("ip", "route", "add", "default", "via", "169.254.1.1", "dev", "eth0");
        pod.must("ip", "-6", "addr", "add", v6 + "/128", "dev", "eth0", "nodad");
        pod.must("ip", "-6", "route", "add", "default", "via", "fe80::1", "dev", "eth0");
        String pidFile = "/tmp/" + pod.name() + ".iperf3.pid";
        pidFiles.add(pidFile);
        pod.must("iperf3", "-s", "-D", "-p", Integer.toString(PORT), "-I", pidFile);
    }

    public Netns node() {
        return node;
    }

    public String ip(String pod) {
        return ipv4.get(pod);
    }

    public String ip6(String pod) {
        return ipv6.get(pod);
    }

    /** Whether a TCP connection from {@code from} to {@code address}:{@link #PORT} opens within a second. */
    public boolean connects(String from, String address) {
        Netns src = pods.get(from);
        for (int attempt = 0; attempt < 20; attempt++) {
            CommandResult r = src.runner().run(
                    List.of("timeout", "1", "bash", "-c", "exec 3<>/dev/tcp/" + address + "/" + PORT), "", Duration.ofSeconds(5));
            if (r.ok()) {
                return true;
            }
            // "Connection refused" means the server is not up yet; a timeout means the packet was dropped.
            if (!r.stderr().contains("refused")) {
                return false;
            }
            sleep(100);
        }
        return false;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        for (String pidFile : pidFiles) {
            KernelTestSupport.bestEffort(List.of("sh", "-c", "test -f " + pidFile + " && kill $(cat " + pidFile + "); rm -f " + pidFile));
        }
        pods.values().forEach(Netns::close);
        node.close();
    }
}
