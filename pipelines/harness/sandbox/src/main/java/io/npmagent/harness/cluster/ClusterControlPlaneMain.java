package io.npmagent.harness.cluster;

import io.npmagent.harness.controlplane.ControlPlane;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The control plane of {@code pipelines/cluster}'s cluster: etcd, kube-apiserver (RBAC and Node
 * authorization), kube-controller-manager with every default controller (node IPAM gives each node its
 * pod ranges of {@link ClusterConfig#POD_CIDRS}), and kube-scheduler, all started in the first node's
 * namespaces ({@link ControlPlaneStep} runs this there). It returns once the API server is
 * ready and the controller manager works, leaving the processes running (their command lines name
 * {@code --dir}, and they sit in the cluster's cgroup, which is how {@code down} stops them). It writes
 * {@code admin.kubeconfig} (the API server on the node's loopback), {@code kubelet-NODE.kubeconfig} for
 * each {@code --node}, {@code kube-proxy.kubeconfig} and {@code flannel.kubeconfig} (the API server at the node's address, where
 * every node reaches it) into {@code --dir} and prints the API server's in-node URL.
 */
@Command(name = "cluster-control-plane", mixinStandardHelpOptions = true,
        description = "Start a cluster's control plane in this network namespace and return when it is ready.")
public final class ClusterControlPlaneMain implements Callable<Integer> {
    @Option(names = "--dir", required = true, paramLabel = "DIR", description = "The control plane's directory (pki, etcd data, logs, kubeconfigs).")
    Path dir;

    @Option(names = "--node", required = true, paramLabel = "NAME", description = "A node's name (a kubelet's credentials are for it); one per node.")
    List<String> nodes;

    @Option(names = "--node-ip", required = true, paramLabel = "ADDRESS", description = "This node's address: the kubernetes Service's endpoint.")
    String nodeIp;

    @Option(names = "--port", defaultValue = "6443", paramLabel = "PORT", description = "The API server's port (default: ${DEFAULT-VALUE}).")
    int port;

    public static void main(String[] args) {
        System.exit(new CommandLine(new ClusterControlPlaneMain()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        ControlPlane cp = ControlPlane.start(dir, nodeIp, ControlPlane.Shape.cluster(port, ClusterConfig.POD_CIDRS));
        for (String node : nodes) {
            cp.kubeletKubeconfig(node, cp.advertisedServer());
        }
        cp.certificateKubeconfig("kube-proxy", cp.advertisedServer());
        cp.userKubeconfig("flannel", cp.advertisedServer());
        System.err.println("control plane " + cp.version() + " ready in " + cp.startup().toMillis() + " ms");
        System.out.println(cp.server());
        return 0;
    }
}
