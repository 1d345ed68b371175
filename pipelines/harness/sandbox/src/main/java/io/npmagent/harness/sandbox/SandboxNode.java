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
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The sandbox's node as the cluster knows it: the Node object (its addresses, Ready), the node's own
 * addresses on the node namespace's loopback, and the real kube-proxy running in that
 * namespace in iptables or nftables mode. kube-proxy reaches the API server (on the host's loopback)
 * through a socat pair joined by a Unix socket, since no interface joins the host's namespace and the
 * node's, and none may be added: one socat listens in the node namespace on the API server's port (on
 * every address there, so the {@code kubernetes} Service's endpoint, the node's address, answers too),
 * the other forwards to the API server from the host.
 */
final class SandboxNode {
    static final List<String> NODE_IPS = List.of("10.249.0.1", "fd49::1");
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private SandboxNode() {}

    /** The Node object, with the node's addresses and a Ready condition (no kubelet posts them here). */
    static void register(ApiClient admin, String node) throws IOException {
        CoreV1Api api = new CoreV1Api(admin);
        try {
            V1Node n = api.createNode(new V1Node().metadata(new V1ObjectMeta().name(node)
                    .labels(Map.of("kubernetes.io/hostname", node, "kubernetes.io/os", "linux")))).execute();
            List<V1NodeAddress> addresses = new ArrayList<>();
            NODE_IPS.forEach(ip -> addresses.add(new V1NodeAddress().type("InternalIP").address(ip)));
            addresses.add(new V1NodeAddress().type("Hostname").address(node));
            n.setStatus(new V1NodeStatus().addresses(addresses).addConditionsItem(new V1NodeCondition().type("Ready").status("True")
                    .reason("SandboxNode").message("the sandbox plays kubelet").lastHeartbeatTime(OffsetDateTime.now())
                    .lastTransitionTime(OffsetDateTime.now())));
            api.replaceNodeStatus(node, n).execute();
        } catch (ApiException e) {
            throw new IOException("cannot register node " + node + ": HTTP " + e.getCode() + " " + e.getResponseBody(), e);
        }
    }

    /** The node's addresses, on the node namespace's loopback (no dummy interfaces in every kernel; lo is always there). */
    static void addresses(NetworkNamespace node) {
        node.must("ip", "addr", "add", NODE_IPS.get(0) + "/32", "dev", "lo");
        node.must("ip", "-6", "addr", "add", NODE_IPS.get(1) + "/128", "dev", "lo", "nodad");
    }

    /** Starts the socat pair and kube-proxy ({@code mode}: iptables or nftables); their logs go to {@code dir}. */
    static void startKubeProxy(ControlPlane cp, Path dir, String netns, String node, String mode) throws IOException {
        Path socket = dir.resolve("apiserver.sock");
        Files.deleteIfExists(socket);
        Path bridgeLog = dir.resolve("apiserver-bridge.log");
        Daemon.of("the API server bridge (host)", bridgeLog, List.of("socat", "UNIX-LISTEN:" + socket + ",fork,mode=600",
                "TCP:127.0.0.1:" + cp.port())).detached().start();
        Daemon.of("the API server bridge (node)", bridgeLog, List.of("socat", "TCP-LISTEN:" + cp.port() + ",fork,reuseaddr",
                "UNIX-CONNECT:" + socket)).inNetns(netns).detached().start();
        Path kubeconfig = cp.certificateKubeconfig("kube-proxy");
        Path config = dir.resolve("kube-proxy.yaml");
        Files.writeString(config, "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"
                + "clientConnection:\n  kubeconfig: " + kubeconfig + "\n"
                + "hostnameOverride: " + node + "\nmode: " + mode + "\n"
                // 0: leave the conntrack table's size alone (a node namespace shares it with the host).
                + "conntrack:\n  maxPerCore: 0\n"
                + "metricsBindAddress: 127.0.0.1:10249\nhealthzBindAddress: 127.0.0.1:10256\n");
        Daemon.of("kube-proxy", dir.resolve("kube-proxy.log"), List.of(KubeBinaries.binary("kube-proxy").toString(),
                "--config=" + config, "--v=1")).inNetns(netns).detached().start();
    }

}
