package io.npmagent.harness.cluster;

import com.google.gson.JsonParser;
import io.npmagent.dataplane.exec.ProcessRunner;
import io.npmagent.harness.controlplane.KubeBinaries;
import io.npmagent.harness.node.NetworkNamespace;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Bringing a cluster up ({@link Step#create(PodNetwork)} in order, then the agent when a backend is given) and
 * down ({@link ClusterDown}): what {@code pipelines/cluster up} and {@code down} run, and what the
 * node-e2e tests call directly.
 */
public final class ClusterLifecycle {
    /** What {@code up} needs on the host besides the upstream binaries. */
    static final List<String> TOOLS = List.of("containerd", "containerd-shim-runc-v2", "runc", "ctr", "umoci", "socat", "nsenter", "unshare",
            "ip", "iptables", "mountpoint", "sysctl");

    private ClusterLifecycle() {}

    /**
     * Brings the cluster {@code config} names up with {@code nodes} nodes on the pod network {@code network},
     * and the agent on {@code backend} if given; returns it.
     */
    public static Cluster up(ClusterConfig config, int nodes, PodNetwork network, Optional<String> backend) throws Exception {
        return up(config, nodes, network, backend, false);
    }

    /** The same, with the cluster's {@link Monitoring} (the Prometheus Operator and its Prometheus, Alertmanager, its receiver) before the agent when {@code monitoring}. */
    public static Cluster up(ClusterConfig config, int nodes, PodNetwork network, Optional<String> backend, boolean monitoring) throws Exception {
        requireRoot();
        Node first = Node.of(config, 0);
        if (NetworkNamespace.exists(first.netns()) || NetworkNamespace.exists(config.underlayNetns())) {
            throw new IllegalStateException("already up (pipelines/cluster down first)");
        }
        ProcessRunner host = ProcessRunner.host();
        for (String t : TOOLS) {
            if (!host.available(t)) {
                throw new IllegalStateException(t + " is missing (pipelines/install-deps containerd runc umoci socat util-linux iproute2 iptables)");
            }
        }
        Instant start = Instant.now();
        Cluster c = Cluster.of(config, nodes, KubeBinaries.dir());
        Files.createDirectories(config.logs());
        Files.writeString(config.state().resolve("bin"), c.bin() + "\n");
        Files.writeString(config.nodeCount(), nodes + "\n");
        // For tools that watch the pods' flows on a node (upstream-suites): the pods' IPv4 range.
        Files.writeString(config.state().resolve("pod-cidr"), ClusterConfig.POD_CIDRS.split(",")[0] + "\n");
        for (Node n : c.nodes()) {
            Cluster.log("node " + n.name() + " (" + n.nodeIps() + ") in network namespace " + n.netns());
        }
        Cluster.log("underlay in network namespace " + config.underlayNetns() + ", pod network " + network + ", state in " + config.state());
        List<Step> steps = new ArrayList<>(Step.create(network));
        if (monitoring) {
            steps.add(new Step("monitoring (the Prometheus Operator, its Prometheus, Alertmanager)", new Monitoring()));
        }
        for (Step step : steps) {
            Cluster.log(step.what() + "...");
            step.up(c);
        }
        Cluster.log("up in " + Duration.between(start, Instant.now()).toSeconds() + " s: " + versions(c));
        if (backend.isPresent()) {
            deployAgent(c, backend.get());
        }
        Cluster.log("kubectl --kubeconfig " + config.adminKubeconfig() + " get pods -A");
        return c;
    }

    /** npm-agent/deploy/ (re)deployed with the ConfigMap's Backend set to {@code backend} (auto: as shipped). */
    public static void deployAgent(Cluster c, String backend) throws Exception {
        Step agent = new Step("npm-agent on backend " + backend, new Agent(backend));
        Cluster.log(agent.what() + "...");
        Instant start = Instant.now();
        agent.up(c);
        Cluster.log("npm-agent Ready on " + c.nodes().size() + (c.nodes().size() == 1 ? " node" : " nodes") + " in "
                + Duration.between(start, Instant.now()).toSeconds() + " s (its image built and loaded on every node, deploy/ applied, the DaemonSet rolled out)");
    }

    /** Takes the cluster {@code config} names down, whatever state it is in and however many nodes it has. */
    public static void down(ClusterConfig config) throws IOException {
        requireRoot();
        ClusterDown.down(Cluster.of(config, ClusterConfig.MAX_NODES, null));
    }

    private static String versions(Cluster c) {
        String server = JsonParser.parseString(c.kubectl("version", "-o", "json")).getAsJsonObject()
                .getAsJsonObject("serverVersion").get("gitVersion").getAsString();
        String[] containerd = c.must("containerd", "--version").stdout().strip().split("\\s+");
        String runc = c.must("runc", "--version").stdout().lines().findFirst().orElse("runc");
        return server + ", " + containerd[0] + " " + (containerd.length > 2 ? containerd[2] : "") + ", " + runc;
    }

    private static void requireRoot() throws IOException {
        if (!Integer.valueOf(0).equals(Files.getAttribute(Path.of("/proc/self"), "unix:uid"))) {
            throw new IllegalStateException("run as root (namespaces, cgroups, containerd)");
        }
    }
}
