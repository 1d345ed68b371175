package io.npmagent.harness.cluster;

import io.npmagent.harness.process.Daemon;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The control plane in the first node (every node reaches it at the first node's address): {@link ClusterControlPlaneMain} started there (its cgroup and
 * namespaces) in a JVM of its own, which returns once the API server is ready and leaves etcd,
 * kube-apiserver, kube-controller-manager and kube-scheduler running in the node. Then the host's admin
 * kubeconfig: the in-node one with the bridge's port ({@link ApiServerBridge}).
 */
final class ControlPlaneStep implements Step.ClusterAction {
    @Override
    public void up(Cluster c) throws Exception {
        Node node = c.first();
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> argv = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"), ClusterControlPlaneMain.class.getName(),
                "--dir", c.config().controlPlaneDir().toString(), "--node-ip", node.ip(), "--port", Integer.toString(ClusterConfig.API_PORT)));
        for (Node n : c.nodes()) {
            argv.addAll(List.of("--node", n.name()));
        }
        Daemon main = node.daemon("control-plane", c.log(node, "control-plane"), argv)
                .env("NPM_AGENT_KUBE_BIN", c.bin().toString())
                .start();
        if (!main.process().waitFor(5, TimeUnit.MINUTES) || main.process().exitValue() != 0) {
            main.stop();
            throw new IllegalStateException("the control plane did not start: " + main.died());
        }
        String inNode = Files.readString(c.config().controlPlaneDir().resolve("admin.kubeconfig"));
        Files.writeString(c.config().adminKubeconfig(), hostKubeconfig(inNode, c.config().hostPort()));
    }

    /** The in-node admin kubeconfig pointed at the host's end of the bridge. */
    static String hostKubeconfig(String inNode, int hostPort) {
        return inNode.replace("https://127.0.0.1:" + ClusterConfig.API_PORT, "https://127.0.0.1:" + hostPort);
    }
}
