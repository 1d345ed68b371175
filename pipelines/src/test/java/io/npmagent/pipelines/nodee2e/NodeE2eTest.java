package io.npmagent.pipelines.nodee2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.harness.cluster.Agent;
import io.npmagent.harness.cluster.Cluster;
import io.npmagent.harness.cluster.ClusterConfig;
import io.npmagent.harness.cluster.ClusterLifecycle;
import io.npmagent.harness.process.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * The agent as an operator meets it: {@code npm-agent/deploy/} applied unchanged to a real one-node
 * cluster ({@link ClusterLifecycle}: kubelet, containerd, CNI bridge, kube-proxy, CoreDNS), enforcing
 * between pods the kubelet made, on every backend. Once, on the shipped ConfigMap (Backend auto): the pod
 * is Ready, auto picks eBPF, /metrics is scraped from the pod, a pod's congestion control is applied
 * through the shipped CgroupRoot, NetPolInBackground is flipped by editing the ConfigMap with no restart,
 * and {@code kubectl delete} of the agent's pod keeps enforcing until its successor is Ready. Then per
 * backend ({@value #BACKENDS}, comma-separated; default all four), chosen through the ConfigMap's Backend
 * key as an operator would: a server admitting one client (ingress policy) and a client allowed nothing
 * but DNS (egress policy), each probed to the server's address and through its ClusterIP, then both
 * policies gone. The cluster comes up first and goes down at the end ({@value #KEEP}=true leaves it up).
 *
 * <p>Needs root and the upstream binaries; tagged {@code node-e2e}, which Maven's test run excludes:
 * {@code pipelines/node-e2e} runs it ({@link NodeE2eMain}).
 */
@Tag("node-e2e")
class NodeE2eTest {
    static final String BACKENDS = "node-e2e.backends";
    static final String KEEP = "node-e2e.keep";
    static final List<String> ALL = List.of("bpf", "iptables-legacy", "nft", "iptables-nft");
    private static final Duration EVENTUALLY = Duration.ofSeconds(40);
    private static final Duration KUBELET_SYNC = Duration.ofSeconds(150);
    private static final String NODE_METRICS = "http://10.250.0.10:10091/metrics";

    private static ClusterConfig config;
    private static Cluster cluster;
    private static String server;
    private static String service;

    @BeforeAll
    static void up() throws Exception {
        config = ClusterConfig.fromEnv(System.getenv());
        Instant start = Instant.now();
        say("cluster up");
        // A cluster an interrupted run left (its netns outlives the run) goes first, as upstream-suites does.
        try {
            ClusterLifecycle.down(config);
        } catch (RuntimeException e) {
            say("an earlier cluster's leftovers: " + e.getMessage());
        }
        cluster = ClusterLifecycle.up(config, Optional.empty());
        say("cluster up in " + Duration.between(start, Instant.now()).toSeconds() + " s");
    }

    @AfterAll
    static void down() throws Exception {
        if (config != null && !Boolean.getBoolean(KEEP)) {
            ClusterLifecycle.down(config);
        }
    }

    @TestFactory
    Stream<DynamicNode> nodeE2e() {
        Stream<DynamicNode> shipped = Stream.of(DynamicContainer.dynamicContainer("on the shipped configuration", shipped().stream()));
        Stream<DynamicNode> perBackend = backends().stream()
                .map(b -> DynamicContainer.dynamicContainer("backend " + b, backend(b).stream()));
        return Stream.concat(shipped, perBackend);
    }

    static List<String> backends() {
        String list = System.getProperty(BACKENDS, "");
        return list.isBlank() ? ALL : Arrays.asList(list.split(","));
    }

    private static Script shipped() {
        String[] before = new String[1];
        Gap gap = new Gap();
        return new Script()
                .act(() -> {
                    say("npm-agent/deploy/ as shipped (backend auto)");
                    ClusterLifecycle.deployAgent(cluster, "auto");
                    String agnhost = Files.readString(config.state().resolve("agnhost-image")).strip();
                    Path pods = config.state().resolve("node-e2e.yaml");
                    Files.writeString(pods, Files.readString(manifest("node-e2e.yaml")).replace("@AGNHOST_IMAGE@", agnhost));
                    k("apply", "-f", pods.toString());
                    k("-n", "node-e2e", "wait", "--for=condition=Ready", "pod", "--all", "--timeout=120s");
                    server = k("-n", "node-e2e", "get", "pod", "server", "-o", "jsonpath={.status.podIP}") + ":8080";
                    service = k("-n", "node-e2e", "get", "service", "server", "-o", "jsonpath={.spec.clusterIP}") + ":80";
                    say("pods: server " + server + " (Service " + service + "), clients allowed and denied");
                })
                .check("the shipped DaemonSet's pod is Ready, with its capabilities, mounts and probes", () ->
                        assertThat(k("-n", "kube-system", "get", "pod", agentPod(), "-o", "jsonpath={.spec.containers[0].securityContext.capabilities.add}"))
                                .contains("BPF"))
                .check("backend auto chose the eBPF backend", () -> assertThat(agentLogs()).containsPattern("backend (bpf|eBPF)"))
                .check("/metrics scraped from the pod", () -> assertThat(metrics()).containsPattern("(?m)^npm_num_policies"))
                .act(() -> {
                    say("on the shipped configuration");
                    apply("node-e2e-policy.yaml");
                })
                .check("ingress policy enforced", () -> eventually("denied refused", () -> !connects("denied", server)))
                // The shipped CgroupRoot (the node's /sys/fs/cgroup; here the node's own cgroup is its cgroup2 root):
                // the sock_ops program sees the pods' sockets, so an annotated pod's connections get their congestion control.
                .act(() -> k("-n", "node-e2e", "annotate", "pod", "allowed", "npm-agent.io/tcp-congestion=cubic", "--overwrite"))
                .check("a pod's npm-agent.io/tcp-congestion applied through the shipped CgroupRoot", () -> eventually("congestion control set",
                        () -> connects("allowed", server) && Pattern.compile("(?m)^npm_tcp_congestion_total\\{result=\"set\"\\} [1-9]").matcher(metrics()).find()))
                .act(() -> {
                    k("-n", "node-e2e", "annotate", "pod", "allowed", "npm-agent.io/tcp-congestion-");
                    before[0] = agentPodAndRestarts();
                    Agent.configure(cluster, "Toggles.NetPolInBackground", "false");
                })
                .check("editing the ConfigMap turns NetPolInBackground off without a restart", () -> Await.until(KUBELET_SYNC, Duration.ofSeconds(1),
                        "the agent's log says so", () -> Pattern.compile("applied.*NetPolInBackground").matcher(agentLogs()).find()))
                .check(() -> "... the same pod, not restarted (" + before[0] + ")", () -> assertThat(agentPodAndRestarts()).isEqualTo(before[0]))
                .act(() -> {
                    Agent.configure(cluster, "Toggles.NetPolInBackground", "true");
                    gap.probe();
                })
                .check(() -> "kubectl delete of the agent's pod: enforcement holds until its successor is Ready (" + gap.probes + " probes, "
                        + gap.wrong + " wrong)", () -> {
                    assertThat(gap.wrong).isZero();
                    assertThat(gap.probes).isPositive();
                    assertThat(gap.successor).isTrue();
                })
                .act(() -> k("-n", "node-e2e", "delete", "networkpolicy", "server-ingress"));
    }

    /** kubectl delete of the agent's pod, probing through the gap until the DaemonSet's next pod is Ready. */
    private static final class Gap {
        int probes;
        int wrong;
        boolean successor;

        void probe() {
            String old = agentPod();
            k("-n", "kube-system", "delete", "pod", old, "--wait=false");
            Instant deadline = Instant.now().plusSeconds(180);
            while (Instant.now().isBefore(deadline)) {
                wrong += (connects("denied", server) ? 1 : 0) + (connects("allowed", server) ? 0 : 1);
                probes += 2;
                CommandResult pod = kubectl("-n", "kube-system", "get", "pods", "-l", "app.kubernetes.io/name=npm-agent",
                        "-o", "jsonpath={.items[0].metadata.name}");
                String name = pod.stdout().strip();
                if (pod.ok() && !name.isEmpty() && !name.equals(old) && "True".equals(kubectl("-n", "kube-system", "get", "pod", name, "-o",
                        "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}").stdout().strip())) {
                    successor = true;
                    return;
                }
            }
        }
    }

    private static Script backend(String b) {
        Script s = new Script()
                .act(() -> {
                    say("backend " + b + " (the ConfigMap's Backend: " + b + ")");
                    ClusterLifecycle.deployAgent(cluster, b);
                })
                .check(b + ": the agent's pod is Ready and runs " + b, () -> assertThat(agentLogs()).contains("backend " + b));
        if (b.equals("bpf")) {
            s.check("bpf: its forward hook is linked (Service traffic judged after DNAT)", () -> assertThat(agentLogs()).doesNotContain("no forward hook"));
        }
        return s.check(b + ": what the backend before left in the kernel is gone, " + b + "'s own is there", () -> eventually(
                        "only " + b + "'s state", () -> ALL.stream().allMatch(o -> o.equals(b) == traces(o))))
                .then(policyChecks(b));
    }

    private static Script policyChecks(String b) {
        return new Script()
                .check(b + ": with no policy the denied client reaches the server", () -> eventually("denied connects", () -> connects("denied", server)))
                .act(() -> apply("node-e2e-policy.yaml"))
                .check(b + ": ingress policy: the allowed client connects", () -> eventually("allowed connects", () -> connects("allowed", server)))
                .check(b + ": ingress policy: the denied client is refused", () -> eventually("denied refused", () -> !connects("denied", server)))
                .check(b + ": ingress policy: the allowed client connects through the ClusterIP", () -> assertThat(connects("allowed", service)).isTrue())
                .check(b + ": ingress policy: the denied client is refused through the ClusterIP", () -> assertThat(connects("denied", service)).isFalse())
                .act(() -> {
                    k("-n", "node-e2e", "delete", "networkpolicy", "server-ingress");
                    apply("node-e2e-egress-policy.yaml");
                })
                .check(b + ": egress policy: the client allowed only DNS is refused", () -> eventually("denied refused", () -> !connects("denied", server)))
                .check(b + ": egress policy: ... and through the ClusterIP", () -> assertThat(connects("denied", service)).isFalse())
                .check(b + ": egress policy: ... but reaches kube-dns through its ClusterIP (TCP/53)",
                        () -> assertThat(connects("denied", ClusterConfig.DNS_SERVICE_IP + ":53")).isTrue())
                .check(b + ": egress policy: the other client still connects through the ClusterIP", () -> assertThat(connects("allowed", service)).isTrue())
                .act(() -> k("-n", "node-e2e", "delete", "networkpolicy", "denied-egress"))
                .check(b + ": policies gone: the denied client connects again", () -> eventually("denied connects", () -> connects("denied", service)));
    }

    /** Whether BACKEND has left something in the node's kernel: bpf its pins, nft its table, iptables its NPM- chains. */
    static boolean traces(String backend) {
        List<String> argv = switch (backend) {
            case "bpf" -> List.of("sh", "-c", "ls /sys/fs/bpf/npm-agent 2>/dev/null | grep -q .");
            case "nft" -> List.of("nft", "list", "table", "inet", "npm_agent");
            default -> List.of("sh", "-c", "\"$0-save\" 2>/dev/null | grep -q '^:NPM-'", backend);
        };
        return cluster.run(cluster.first().inside(argv)).ok();
    }

    /** Whether a TCP connection from the client pod to TARGET opens (agnhost connect, 2 s). */
    static boolean connects(String client, String target) {
        return kubectl("-n", "node-e2e", "exec", client, "--", "/agnhost", "connect", "--timeout=2s", target).ok();
    }

    /** Retried for a while: a policy lands within a batch, not at once. */
    static void eventually(String what, java.util.function.BooleanSupplier condition) {
        Await.until(EVENTUALLY, Duration.ofSeconds(1), what, condition);
    }

    private static String metrics() {
        return cluster.inNode(cluster.first(), "curl", "-sf", "--max-time", "5", NODE_METRICS).stdout();
    }

    private static String agentPod() {
        return k("-n", "kube-system", "get", "pods", "-l", "app.kubernetes.io/name=npm-agent", "-o", "jsonpath={.items[0].metadata.name}");
    }

    private static String agentLogs() {
        return k("-n", "kube-system", "logs", agentPod());
    }

    private static String agentPodAndRestarts() {
        String pod = agentPod();
        return pod + " " + k("-n", "kube-system", "get", "pod", pod, "-o", "jsonpath={.status.containerStatuses[0].restartCount}");
    }

    private static void apply(String manifest) throws Exception {
        k("apply", "-f", manifest(manifest).toString());
    }

    private static Path manifest(String name) {
        return cluster.checkout().resolve("pipelines/cluster-manifests").resolve(name);
    }

    private static CommandResult kubectl(String... args) {
        return cluster.kubectlRun(args);
    }

    private static String k(String... args) {
        return cluster.kubectl(args).strip();
    }

    static void say(String message) {
        System.out.println("node-e2e: " + message);
    }
}
