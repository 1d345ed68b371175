package io.npmagent.harness.sandbox;

import io.npmagent.harness.node.NetworkNamespace;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeAddress;
import io.kubernetes.client.openapi.models.V1NodeCondition;
import io.kubernetes.client.openapi.models.V1NodeStatus;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.npmagent.harness.controlplane.ControlPlane;
import io.npmagent.harness.controlplane.KubeBinaries;
import io.npmagent.harness.process.Daemon;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One stand-in node of a sandbox, and every name that is its own: its name in the cluster, its network
 * namespace, the state directory its agent writes ({@code status.json}, {@code metrics.prom}, the agent's
 * and kube-proxy's logs), its bpffs, its cgroup (its pods' processes below it; the agent's
 * {@code --cgroup-root}), its addresses, and its end of the underlay. The node daemon makes it a node of
 * the cluster: the Node object ({@link #register}), its addresses ({@link #addresses}), the real kube-proxy
 * in its namespace ({@link #startKubeProxy}).
 *
 * <p>Node 0 keeps the names a one-node sandbox always had ({@code npmsb-NAME}, namespace
 * {@code npmsb-NAME.node}, the sandbox's own state directory, bpffs and cgroup, {@code 10.249.0.1} and
 * {@code fd49::1}); node {@code i > 0} is {@code npmsb-NAME-i} in {@code npmsb-NAME.node<i>}, with a state
 * directory {@code node<i>/} inside the sandbox's, cgroup {@code npm-agent-sandbox-NAME.node<i>}, and the
 * next addresses. Every name still starts with what {@link Sandbox} owns, so {@code down} finds them all.
 */
public record SandboxNode(int index, String name, String netns, Path stateDir, Path bpffs, String cgroupName, String ipv4, String ipv6) {
    /** A sandbox has 1 to 4 nodes, as the real-node cluster. */
    public static final int MAX_NODES = 4;
    /** The underlay's interface in each node (on the underlay's bridge), when the sandbox has more than one node. */
    static final String UNDERLAY_DEVICE = "eth0";

    static SandboxNode of(Sandbox sandbox, int index) {
        if (index < 0 || index >= MAX_NODES) {
            throw new IllegalArgumentException("node " + index + ": a sandbox has 1 to " + MAX_NODES + " nodes");
        }
        if (index == 0) {
            return new SandboxNode(0, "npmsb-" + sandbox.name(), "npmsb-" + sandbox.name() + ".node", sandbox.dir(), sandbox.dir().resolve("bpffs"),
                    PodCgroups.name(sandbox), "10.249.0.1", "fd49::1");
        }
        Path state = sandbox.dir().resolve("node" + index);
        return new SandboxNode(index, "npmsb-" + sandbox.name() + "-" + index, "npmsb-" + sandbox.name() + ".node" + index, state,
                state.resolve("bpffs"), PodCgroups.name(sandbox) + ".node" + index, "10.249.0." + (index + 1), "fd49::" + (index + 1));
    }

    /** The node's cgroup2 directory (not created here); its pods' cgroups are below it. */
    public Path cgroup() {
        return PodCgroups.at(cgroupName);
    }

    /** The node's addresses, IPv4 first. */
    public List<String> ips() {
        return List.of(ipv4, ipv6);
    }

    /** Its address on the underlay (IPv4, a /24 shared by the nodes): where the other nodes route its pods and addresses. */
    String underlayV4() {
        return "10.249.1." + (index + 1);
    }

    /** Its IPv6 address on the underlay (a /64). */
    String underlayV6() {
        return "fd49:1::" + (index + 1);
    }

    /** The underlay's address of this node in the family of {@code ip}. */
    String underlayFor(String ip) {
        return ip.contains(":") ? underlayV6() : underlayV4();
    }

    NetworkNamespace namespace() {
        return NetworkNamespace.existing(netns);
    }

    /** The Node object, with the node's addresses and a Ready condition (no kubelet posts them here). */
    void register(ApiClient admin) throws IOException {
        CoreV1Api api = new CoreV1Api(admin);
        try {
            V1Node n = api.createNode(new V1Node().metadata(new V1ObjectMeta().name(name)
                    .labels(Map.of("kubernetes.io/hostname", name, "kubernetes.io/os", "linux")))).execute();
            List<V1NodeAddress> addresses = new ArrayList<>();
            ips().forEach(ip -> addresses.add(new V1NodeAddress().type("InternalIP").address(ip)));
            addresses.add(new V1NodeAddress().type("Hostname").address(name));
            n.setStatus(new V1NodeStatus().addresses(addresses).addConditionsItem(new V1NodeCondition().type("Ready").status("True")
                    .reason("SandboxNode").message("the sandbox plays kubelet").lastHeartbeatTime(OffsetDateTime.now())
                    .lastTransitionTime(OffsetDateTime.now())));
            api.replaceNodeStatus(name, n).execute();
        } catch (ApiException e) {
            throw new IOException("cannot register node " + name + ": HTTP " + e.getCode() + " " + e.getResponseBody(), e);
        }
    }

    /** The node's addresses, on the node namespace's loopback (no dummy interfaces in every kernel; lo is always there). */
    void addresses() {
        NetworkNamespace node = namespace();
        node.must("ip", "addr", "add", ipv4 + "/32", "dev", "lo");
        node.must("ip", "-6", "addr", "add", ipv6 + "/128", "dev", "lo", "nodad");
    }

    /**
     * Starts the real kube-proxy ({@code mode}: iptables or nftables) in the node's namespace, its log in
     * the node's state directory. It reaches the API server (on the host's loopback) through a socat pair
     * joined by a Unix socket, since no interface joins the host's namespace and the node's, and none may
     * be added: one socat listens in the node namespace on the API server's port (on every address there,
     * so the {@code kubernetes} Service's endpoint, node 0's address, answers too), the other forwards to
     * the API server from the host.
     */
    void startKubeProxy(ControlPlane cp, String mode) throws IOException {
        Files.createDirectories(stateDir);
        Path socket = stateDir.resolve("apiserver.sock");
        Files.deleteIfExists(socket);
        Path bridgeLog = stateDir.resolve("apiserver-bridge.log");
        Daemon.of("the API server bridge (host, " + name + ")", bridgeLog, List.of("socat", "UNIX-LISTEN:" + socket + ",fork,mode=600",
                "TCP:127.0.0.1:" + cp.port())).detached().start();
        Daemon.of("the API server bridge (" + name + ")", bridgeLog, List.of("socat", "TCP-LISTEN:" + cp.port() + ",fork,reuseaddr",
                "UNIX-CONNECT:" + socket)).inNetns(netns).detached().start();
        Path kubeconfig = cp.certificateKubeconfig("kube-proxy");
        Path config = stateDir.resolve("kube-proxy.yaml");
        Files.writeString(config, "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"
                + "clientConnection:\n  kubeconfig: " + kubeconfig + "\n"
                + "hostnameOverride: " + name + "\nmode: " + mode + "\n"
                // 0: leave the conntrack table's size alone (a node namespace shares it with the host).
                + "conntrack:\n  maxPerCore: 0\n"
                + "metricsBindAddress: 127.0.0.1:10249\nhealthzBindAddress: 127.0.0.1:10256\n");
        Daemon.of("kube-proxy (" + name + ")", stateDir.resolve("kube-proxy.log"), List.of(KubeBinaries.binary("kube-proxy").toString(),
                "--config=" + config, "--v=1")).inNetns(netns).detached().start();
    }
}
