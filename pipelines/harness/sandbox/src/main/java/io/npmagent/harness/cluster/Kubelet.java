package io.npmagent.harness.cluster;

import io.npmagent.harness.process.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The node's kubelet: cgroupfs driver on cgroup v1 under the node's v1 root ({@link NodeCgroups}), its
 * root directory, certificates, pod logs and resolv.conf its own, containerd's socket the node's, its
 * addresses IPv4 and IPv6. It returns when the Node is registered and kube-controller-manager has given
 * it its pod ranges; it is Ready once the pod network is there ({@link HostGw}). The host's tunables it
 * sets are saved first ({@link Tunables}).
 */
final class Kubelet implements Step.NodeAction {
    @Override
    public void up(Cluster c, Node node) throws Exception {
        Path dir = Files.createDirectories(node.kubeletDir());
        Files.writeString(dir.resolve("resolv.conf"), "nameserver " + node.ip() + "\n");
        Path config = dir.resolve("config.yaml");
        Path pki = c.config().controlPlaneDir().resolve("pki");
        Files.writeString(config, render(node, pki.resolve("ca.crt"), c.config().state().resolve("pod-logs" + node.suffix())));
        Tunables.save(c);
        node.daemon("kubelet", c.log(node, "kubelet"), List.of(c.bin("kubelet").toString(), "--config=" + config,
                "--kubeconfig=" + c.config().controlPlaneDir().resolve("kubelet-" + node.name() + ".kubeconfig"), "--root-dir=" + dir.resolve("root"),
                "--cert-dir=" + dir.resolve("pki"), "--hostname-override=" + node.name(), "--node-ip=" + node.nodeIps(), "--v=1")).start();
        Await.until(Duration.ofSeconds(120), "node " + node.name() + " registered with its pod ranges", () -> c.podCidrs(node).size() == 2,
                () -> "logs in " + c.config().logs());
    }

    /** Waits until the node's Ready condition is True (its runtime has a pod network). */
    static void awaitReady(Cluster c, Node node) {
        c.awaitCommand(Duration.ofSeconds(120), "node " + node.name() + "'s Ready condition", List.of("sh", "-c",
                "\"$0\" --kubeconfig \"$1\" get node \"$2\" -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True",
                c.bin("kubectl").toString(), c.config().adminKubeconfig().toString(), node.name()));
    }

    static String render(Node node, Path clientCa, Path podLogs) {
        return """
                apiVersion: kubelet.config.k8s.io/v1beta1
                kind: KubeletConfiguration
                authentication:
                  anonymous: {enabled: false}
                  webhook: {enabled: true}
                  x509: {clientCAFile: %s}
                authorization: {mode: Webhook}
                address: %s
                readOnlyPort: 0
                healthzBindAddress: 127.0.0.1
                healthzPort: 10248
                containerRuntimeEndpoint: unix://%s
                cgroupDriver: cgroupfs
                cgroupRoot: %s
                # This VM's cgroups are v1 (NodeCgroups); v1.34 still starts there, and says so.
                failCgroupV1: false
                failSwapOn: false
                # Without CAP_SYS_RESOURCE (see containerd's restrict_oom_score_adj) the kubelet cannot take -999 for itself.
                oomScoreAdj: 0
                # Its own files, not the host's: pod logs, resolv.conf for dnsPolicy Default pods.
                podLogsDir: %s
                resolvConf: %s
                clusterDNS: [%s]
                clusterDomain: cluster.local
                # A throw-away node on a shared disk: no evictions for the host's disk use, no image garbage collection
                # (the images are imported here, there is no registry to pull them again from).
                evictionHard: {memory.available: "100Mi"}
                imageGCHighThresholdPercent: 100
                serializeImagePulls: false
                # Pods' volumes synced every 10 s, not every minute: an edited ConfigMap reaches the agent's file sooner.
                syncFrequency: 10s
                """.formatted(clientCa, node.ip(), node.containerdSocket(), node.v1Root(), podLogs,
                node.kubeletDir().resolve("resolv.conf"), ClusterConfig.DNS_SERVICE_IP);
    }
}
