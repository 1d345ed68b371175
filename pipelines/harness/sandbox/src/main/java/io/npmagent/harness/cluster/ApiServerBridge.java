package io.npmagent.harness.cluster;

import java.time.Duration;
import java.util.List;

/**
 * The host's way to the API server: socat on 127.0.0.1:PORT (NPM_AGENT_CLUSTER_PORT) forking, for each
 * connection, a socat in the first node's network namespace to the API server there. It sits in the
 * node's cgroup, so {@code down} stops it with the rest.
 */
final class ApiServerBridge implements Step.ClusterAction {
    @Override
    public void up(Cluster c) throws Exception {
        Node node = c.first();
        int port = c.config().hostPort();
        io.npmagent.harness.process.Daemon.of("apiserver-bridge", c.log(node, "apiserver-bridge"), argv(node, port))
                .inCgroup(node.cgroup()).detached().start();
        c.awaitKubectl(Duration.ofSeconds(20), "the API server from the host at 127.0.0.1:" + port + " (taken? set NPM_AGENT_CLUSTER_PORT)",
                "get", "--raw", "/readyz");
    }

    static List<String> argv(Node node, int hostPort) {
        return List.of("socat", "TCP-LISTEN:" + hostPort + ",bind=127.0.0.1,fork,reuseaddr",
                "EXEC:nsenter --net=/run/netns/" + node.netns() + " socat STDIO TCP\\:127.0.0.1\\:" + ClusterConfig.API_PORT);
    }
}
