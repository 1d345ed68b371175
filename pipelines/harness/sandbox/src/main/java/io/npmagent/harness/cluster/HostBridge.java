package io.npmagent.harness.cluster;

import io.npmagent.harness.process.Daemon;
import java.util.List;

/**
 * A port of the first node's loopback on the host's: socat on 127.0.0.1:HOST_PORT forking, for each connection,
 * a socat in the node's network namespace to 127.0.0.1:NODE_PORT there (the API server, Prometheus,
 * Alertmanager listen on the node's loopback only). It sits in the node's cgroup, so {@code down} stops it
 * with the rest.
 */
final class HostBridge {
    private HostBridge() {}

    static void start(Cluster c, String what, int hostPort, int nodePort) throws Exception {
        Node node = c.first();
        Daemon.of(what + "-bridge", c.log(node, what + "-bridge"), argv(node, hostPort, nodePort)).inCgroup(node.cgroup()).detached().start();
    }

    static List<String> argv(Node node, int hostPort, int nodePort) {
        return List.of("socat", "TCP-LISTEN:" + hostPort + ",bind=127.0.0.1,fork,reuseaddr",
                "EXEC:nsenter --net=/run/netns/" + node.netns() + " socat STDIO TCP\\:127.0.0.1\\:" + nodePort);
    }
}
