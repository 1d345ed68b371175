package io.npmagent.harness.cluster;

import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * What names a cluster and where it keeps its files, from the environment as {@code pipelines/cluster}
 * reads it: {@code NPM_AGENT_CLUSTER_NAME} (default {@code npm-agent-cluster}), {@code NPM_AGENT_CLUSTER_PORT}
 * (the admin kubeconfig's port on the host's loopback, default 16443), {@code NPM_AGENT_CLUSTER_DIR} (its
 * state, default {@code /var/lib/NAME}) and {@code NPM_AGENT_UPSTREAM_CACHE} (where the images it builds
 * are cached). A second cluster beside the first takes another name and port.
 */
public record ClusterConfig(String name, int hostPort, Path state, Path run, Path upstreamCache) {
    /** Up to 28: the underlay's namespace adds {@code -ul} and a network namespace's name has at most 31. */
    private static final Pattern NAME = Pattern.compile("[a-z][a-z0-9-]{0,27}");
    /** How many nodes a cluster may have; {@code down} looks for this many, whatever {@code up} made. */
    public static final int MAX_NODES = 4;
    /** The API server's port inside the node. */
    public static final int API_PORT = 6443;
    /** The pods' Service ClusterIP for DNS (kube-dns), as the kubelet and CoreDNS's manifest say. */
    public static final String DNS_SERVICE_IP = "10.96.0.10";
    /** The pods' ranges, IPv4 and IPv6: kube-controller-manager gives each node a /24 and a /64 of them. */
    public static final String POD_CIDRS = "10.244.0.0/16,fd00:10:244::/56";

    public ClusterConfig {
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("NPM_AGENT_CLUSTER_NAME must be [a-z][a-z0-9-]* (up to 28), not " + name);
        }
    }

    public static ClusterConfig fromEnv(Map<String, String> env) {
        String name = env.getOrDefault("NPM_AGENT_CLUSTER_NAME", "npm-agent-cluster");
        String port = env.getOrDefault("NPM_AGENT_CLUSTER_PORT", "16443");
        String state = env.getOrDefault("NPM_AGENT_CLUSTER_DIR", "/var/lib/" + name);
        String cache = env.getOrDefault("NPM_AGENT_UPSTREAM_CACHE", "/var/cache/npm-agent/upstream");
        return new ClusterConfig(name, Integer.parseInt(port), Path.of(state), Path.of("/run", name), Path.of(cache));
    }

    /** The namespace of the underlay: the bridge every node's eth0 is a port of. */
    public String underlayNetns() {
        return name + "-ul";
    }

    /** Where {@code up} records how many nodes it made. */
    public Path nodeCount() {
        return state.resolve("nodes");
    }

    public Path logs() {
        return state.resolve("logs");
    }

    public Path controlPlaneDir() {
        return state.resolve("control-plane");
    }

    /** The admin kubeconfig for the host: the API server through the bridge on 127.0.0.1:{@link #hostPort}. */
    public Path adminKubeconfig() {
        return state.resolve("admin.kubeconfig");
    }

    public Path imageCache() {
        return upstreamCache.resolve("images");
    }
}
