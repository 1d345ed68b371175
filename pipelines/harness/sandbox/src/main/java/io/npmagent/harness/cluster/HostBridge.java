package io.npmagent.harness.cluster;

import io.npmagent.harness.process.Daemon;
import java.util.List;

/**
 * A way from the host's loopback into the cluster: socat on 127.0.0.1:HOST_PORT forking, for each connection,
 * a socat in the first node's network namespace to TARGET:PORT from there (the API server on the node's
 * loopback, Alertmanager on its address, Prometheus behind a ClusterIP). It sits in the node's cgroup, so
 * {@code down} stops it with the rest.
 */
final class HostBridge {
    private HostBridge() {}

    static void start(Cluster c, String what, int hostPort, String target, int port) throws Exception {
        Node node = c.first();
        Daemon.of(what + "-bridge", c.log(node, what + "-bridge"), argv(node, hostPort, target, port)).inCgroup(node.cgroup()).detached().start();
    }

    static List<String> argv(Node node, int hostPort, String target, int port) {
        return List.of("socat", "TCP-LISTEN:" + hostPort + ",bind=127.0.0.1,fork,reuseaddr",
                "EXEC:nsenter --net=/run/netns/" + node.netns() + " socat STDIO TCP\\:" + target + "\\:" + port);
    }
}
