package io.npmagent.harness.cluster;

import io.npmagent.harness.monitoring.AlertLog;
import io.npmagent.harness.monitoring.DashboardQueries;
import io.npmagent.harness.process.Daemon;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code pipelines/cluster}: a Kubernetes cluster of one to four nodes on this machine, every part upstream's, in
 * namespaces of its own (the package's javadoc says how it is laid out).
 */
public final class ClusterMain {
    static final String USAGE = """
            pipelines/cluster up [--nodes N] [--pod-network host-gw|vxlan] [--monitoring] [--backend B]
                                                 start it with N nodes (1 to 4, default 1) on that pod network (default host-gw:
                                                 routes on the underlay; vxlan: flannel), with --monitoring Prometheus and
                                                 Alertmanager running npm-agent/deploy/monitoring/ (Prometheus on the host at
                                                 127.0.0.1:PORT+1, Alertmanager at PORT+2) and, with --backend, deploy
                                                 npm-agent/deploy/ on backend B
            pipelines/cluster dashboard [--since MINUTES]   with --monitoring: every query of npm-agent/deploy/grafana/dashboard.json
                                                 (all agents) over the last MINUTES (default 60) and how many series it returns;
                                                 exit 1 if one returns none
            pipelines/cluster alerts             with --monitoring: every alert notification Alertmanager's receiver got
            pipelines/cluster down               stop it and remove everything it made (its state, cgroups, namespaces)
            pipelines/cluster kubeconfig         print the admin kubeconfig's path (kubectl --kubeconfig "$(pipelines/cluster kubeconfig)")
            pipelines/cluster nodes              print each node's name and network namespace
            pipelines/cluster exec [--node NODE] CMD...   run CMD inside a node (its network and mount namespaces; default the first)
            pipelines/cluster agent --backend B  (re)deploy npm-agent/deploy/ as shipped, its ConfigMap's Backend set to B (auto: as shipped)
            pipelines/cluster agent-config KEY JSON   set one key of the agent's ConfigMap (Toggles.NetPolInBackground false)
            pipelines/cluster ctr [--node NODE] ARGS...   containerd's ctr on a node's containerd, namespace k8s.io (images tag A B)
            Environment: NPM_AGENT_CLUSTER_NAME, NPM_AGENT_CLUSTER_PORT, NPM_AGENT_CLUSTER_DIR, NPM_AGENT_UPSTREAM_CACHE.
            """;

    private ClusterMain() {}

    public static void main(String[] args) {
        try {
            System.exit(run(List.of(args)));
        } catch (Exception e) {
            System.err.println("cluster: " + (e.getMessage() != null ? e.getMessage() : e));
            System.exit(1);
        }
    }

    static int run(List<String> args) throws Exception {
        if (args.isEmpty()) {
            return usage();
        }
        ClusterConfig config = ClusterConfig.fromEnv(System.getenv());
        List<String> rest = args.subList(1, args.size());
        switch (args.get(0)) {
            case "up" -> {
                Optional<String> backend = Optional.empty();
                int nodes = 1;
                PodNetwork network = PodNetwork.HOST_GW;
                boolean monitoring = false;
                for (int i = 0; i < rest.size(); i++) {
                    if (rest.get(i).equals("--backend") && i + 1 < rest.size()) {
                        backend = Optional.of(rest.get(++i));
                    } else if (rest.get(i).equals("--pod-network") && i + 1 < rest.size()) {
                        network = PodNetwork.of(rest.get(++i));
                    } else if (rest.get(i).equals("--monitoring")) {
                        monitoring = true;
                    } else if (rest.get(i).equals("--nodes") && i + 1 < rest.size()) {
                        nodes = Integer.parseInt(rest.get(++i));
                    } else {
                        throw new IllegalArgumentException("unknown option " + rest.get(i) + " (up [--nodes N] [--pod-network host-gw|vxlan] [--monitoring] [--backend B])");
                    }
                }
                ClusterLifecycle.up(config, nodes, network, backend, monitoring);
                return 0;
            }
            case "down" -> {
                ClusterLifecycle.down(config);
                return 0;
            }
            case "kubeconfig" -> {
                if (!Files.exists(config.adminKubeconfig())) {
                    throw new IllegalStateException("not up (pipelines/cluster up)");
                }
                System.out.println(config.adminKubeconfig());
                return 0;
            }
            case "nodes" -> {
                for (Node n : up(config).nodes()) {
                    System.out.println(n.name() + " " + n.netns());
                }
                return 0;
            }
            case "exec" -> {
                Cluster c = up(config);
                return passthrough(onNode(c, rest).inside(afterNode(rest)));
            }
            case "ctr" -> {
                Cluster c = up(config);
                return passthrough(onNode(c, rest).ctr(afterNode(rest)));
            }
            case "agent" -> {
                if (rest.size() != 2 || !rest.get(0).equals("--backend")) {
                    throw new IllegalArgumentException("agent --backend B (with the cluster up)");
                }
                ClusterLifecycle.deployAgent(up(config), rest.get(1));
                return 0;
            }
            case "dashboard" -> {
                long minutes = rest.size() == 2 && rest.get(0).equals("--since") ? Long.parseLong(rest.get(1)) : 60;
                return dashboard(up(config), Duration.ofMinutes(minutes));
            }
            case "alerts" -> {
                up(config);
                for (AlertLog.Received a : Monitoring.alerts(config).alerts()) {
                    System.out.println(a.receivedAt() + " " + a.status() + " " + a.labels());
                }
                return 0;
            }
            case "agent-config" -> {
                if (rest.size() != 2) {
                    throw new IllegalArgumentException("agent-config KEY JSON (with the cluster up)");
                }
                Agent.configure(up(config), rest.get(0), rest.get(1));
                return 0;
            }
            default -> {
                return usage();
            }
        }
    }

    /** The node {@code --node NODE} at the front of {@code args} names, else the first. */
    private static Node onNode(Cluster c, List<String> args) {
        return args.size() >= 2 && args.get(0).equals("--node") ? c.node(args.get(1)) : c.first();
    }

    private static List<String> afterNode(List<String> args) {
        return args.size() >= 2 && args.get(0).equals("--node") ? args.subList(2, args.size()) : args;
    }

    /** The cluster that is up, or a failure saying it is not. */
    private static Cluster up(ClusterConfig config) throws Exception {
        Cluster c = Cluster.existing(config);
        if (!Files.exists(c.first().mountNs())) {
            throw new IllegalStateException("not up (pipelines/cluster up)");
        }
        return c;
    }

    /**
     * Runs a command with this process's stdin, stdout and stderr (a user's command in the node); its exit
     * code. A signal that ends this JVM ends the command too (upstream-suites stops its conntrack capture
     * by killing the launcher), as it did when the script exec'd it.
     */
    private static int passthrough(List<String> argv) throws Exception {
        Process p = new ProcessBuilder(new ArrayList<>(argv)).inheritIO().start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> Daemon.stop(p.toHandle(), Duration.ofSeconds(5))));
        return p.waitFor();
    }

    /** Each dashboard query over the last {@code since}: its series count, one line each; 1 if one returned none. */
    private static int dashboard(Cluster c, Duration since) throws Exception {
        if (!Monitoring.on(c.config())) {
            throw new IllegalStateException("no monitoring (pipelines/cluster up --monitoring)");
        }
        Instant now = Instant.now();
        int empty = 0;
        for (DashboardQueries.Answer a : DashboardQueries.ask(Monitoring.prometheus(c.config()),
                c.checkout().resolve(Monitoring.DASHBOARD), now.minus(since), now)) {
            System.out.println(a.series() + "\t" + a.query());
            empty += a.series() == 0 ? 1 : 0;
        }
        return empty == 0 ? 0 : 1;
    }

    private static int usage() {
        System.err.print(USAGE);
        return 2;
    }
}
