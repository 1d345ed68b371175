package io.npmagent.pipelines.nodee2e;

import io.npmagent.harness.cluster.Cluster;
import io.npmagent.harness.cluster.Monitoring;
import io.npmagent.harness.cluster.Node;
import io.npmagent.harness.monitoring.AlertLog;
import io.npmagent.harness.process.Await;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Three of the shipped alerts made to fire for real on the iptables-nft backend, each on a node of its own, and to
 * resolve when the cause goes, every notification seen at Alertmanager's receiver ({@link Monitoring}):
 * <ul>
 *   <li><b>NpmAgentDown</b> on the third node: its input hook rejects Prometheus (its pod, by its address) at the agent's
 *       metrics port, an nft table of the test's own; the kubelet's probes, from the node itself, still pass, so the
 *       agent keeps running and only Prometheus loses it, as behind a broken network path or a node firewall.</li>
 *   <li><b>NpmAgentApplyFailing</b> on the second node: a chain of someone else's (not the agent's NPM- prefix)
 *       jumps to the chain of a policy, then the policy is deleted; the kernel refuses to delete a chain still
 *       referenced (EBUSY), the agent retries the part, and {@code npm_apply_failing_parts} stays up until the
 *       foreign chain goes.</li>
 *   <li><b>NpmAgentIptablesRestoreSlow</b> on the first node: the agent container's {@code xtables-nft-multi}
 *       is bind-mounted over (in the container's own mount namespace, its image untouched) by a wrapper that
 *       sleeps {@value #DELAY_SECONDS} s before every {@code *-restore} and runs the real binary, while a policy
 *       on a pod there is created and deleted every {@value #CHURN_SECONDS} s, so restores keep coming, each
 *       slower than the alert's 5 s.</li>
 * </ul>
 * Alerts take the time the rules say (the {@code for:} of 5 and 15 minutes, the 30 s scrape and evaluation):
 * about 20 minutes to fire and up to 6 more to resolve, so this is {@code pipelines/node-e2e --alerts}, not CI's run.
 */
final class AlertsScenario {
    static final String BACKEND = "iptables-nft";
    static final Duration FIRE_TIMEOUT = Duration.ofMinutes(25);
    static final Duration RESOLVE_TIMEOUT = Duration.ofMinutes(15);
    private static final int DELAY_SECONDS = 6;
    private static final int CHURN_SECONDS = 20;
    private static final int METRICS_PORT = 10091;
    private static final String FOREIGN_CHAIN = "E2E-FOREIGN";
    private static final String FAULT_TABLE = "npm_e2e_alerts";
    private static final String NAMESPACE = "node-e2e";

    /** One alert the scenario expects, the node it is caused on, and what the receiver saw. */
    static final class Expected {
        final String alert;
        final Node node;
        final String cause;
        Optional<AlertLog.Received> fired = Optional.empty();
        Optional<AlertLog.Received> resolved = Optional.empty();

        Expected(String alert, Node node, String cause) {
            this.alert = alert;
            this.node = node;
            this.cause = cause;
        }

        @Override
        public String toString() {
            return alert + " on " + node.name();
        }
    }

    private final Cluster cluster;
    private final Node slow;
    private final Node refusing;
    private final Node unreachable;
    final List<Expected> expected = new ArrayList<>();
    private ScheduledExecutorService churn;
    private String agentPid;
    Instant causesStarted;
    Instant causesRemoved;

    AlertsScenario(Cluster cluster) {
        if (cluster.nodes().size() < 3) {
            throw new IllegalArgumentException("--alerts needs three nodes (a cause on each): --nodes 3");
        }
        this.cluster = cluster;
        this.slow = cluster.nodes().get(0);
        this.refusing = cluster.nodes().get(1);
        this.unreachable = cluster.nodes().get(2);
        expected.add(new Expected("NpmAgentIptablesRestoreSlow", slow, "every restore " + DELAY_SECONDS + " s slower"));
        expected.add(new Expected("NpmAgentApplyFailing", refusing, "a policy's chain the kernel refuses to delete"));
        expected.add(new Expected("NpmAgentDown", unreachable, "Prometheus rejected at the agent's port"));
    }

    /** The three causes, at once; {@link #causesStarted} is when the last was in place. */
    void start() throws Exception {
        // The refusal: a policy on the server (on the second node), its chain found by the rule that jumps to it.
        apply("""
                apiVersion: networking.k8s.io/v1
                kind: NetworkPolicy
                metadata: {name: alerts-refused, namespace: node-e2e}
                spec:
                  podSelector: {matchLabels: {app: server}}
                  ingress:
                    - from: [{podSelector: {matchLabels: {access: allowed}}}]
                """);
        String[] chain = new String[1];
        Await.until(Duration.ofSeconds(60), Duration.ofSeconds(1), "the policy's chain on " + refusing.name(), () -> {
            chain[0] = policyChain(cluster.run(refusing.inside(List.of("iptables-nft-save", "-t", "filter"))).stdout(), NAMESPACE + "/alerts-refused");
            return chain[0] != null;
        });
        k("label", "pod", "-n", NAMESPACE, "denied-0", "alerts-churn=on", "--overwrite");

        slowRestores();
        cluster.inNode(refusing, "iptables-nft", "-w", "-t", "filter", "-N", FOREIGN_CHAIN);
        cluster.inNode(refusing, "iptables-nft", "-w", "-t", "filter", "-A", FOREIGN_CHAIN, "-j", chain[0]);
        k("delete", "networkpolicy", "-n", NAMESPACE, "alerts-refused");
        cluster.must(unreachable.inside(List.of("nft", "-f", "-")), rejectPrometheus(Monitoring.prometheusPodIp(cluster)));
        churn = Executors.newSingleThreadScheduledExecutor();
        churn.scheduleWithFixedDelay(this::churnOnce, 0, CHURN_SECONDS, TimeUnit.SECONDS);
        causesStarted = Instant.now();
    }

    /** Waits until every expected alert has reached the receiver firing; true if all did within {@link #FIRE_TIMEOUT}. */
    boolean awaitFiring() throws IOException {
        return await(FIRE_TIMEOUT, "firing", causesStarted);
    }

    /**
     * Takes the three causes away, each whatever became of the others; {@link #causesRemoved} is when the last went.
     * The wrapper is unmounted lazily: a restore may be sleeping in it, and it finishes on the wrapper it started with.
     */
    void stop() throws Exception {
        if (churn != null) {
            churn.shutdownNow();
            churn.awaitTermination(30, TimeUnit.SECONDS);
        }
        List<String> failed = new ArrayList<>();
        List<List<String>> undo = new ArrayList<>();
        if (agentPid != null) {
            undo.add(List.of("nsenter", "-t", agentPid, "-m", "-p", "--", "/tmp/umount", "--lazy", "/usr/sbin/xtables-nft-multi"));
        }
        undo.add(unreachable.inside(List.of("nft", "delete", "table", "inet", FAULT_TABLE)));
        undo.add(refusing.inside(List.of("iptables-nft", "-w", "-t", "filter", "-F", FOREIGN_CHAIN)));
        undo.add(refusing.inside(List.of("iptables-nft", "-w", "-t", "filter", "-X", FOREIGN_CHAIN)));
        for (List<String> argv : undo) {
            var r = cluster.run(argv);
            if (!r.ok()) {
                failed.add(String.join(" ", argv) + ": " + r.errorSummary());
            }
        }
        causesRemoved = Instant.now();
        cluster.kubectlRun("delete", "networkpolicy", "-n", NAMESPACE, "alerts-churn", "--ignore-not-found");
        cluster.kubectlRun("label", "pod", "-n", NAMESPACE, "denied-0", "alerts-churn-");
        if (!failed.isEmpty()) {
            throw new IllegalStateException("a cause stayed: " + failed);
        }
    }

    /** Waits until every expected alert has reached the receiver resolved, after the causes went. */
    boolean awaitResolved() throws IOException {
        return await(RESOLVE_TIMEOUT, "resolved", causesRemoved);
    }

    /** Every alert the receiver got during the scenario, one line each, for the record. */
    List<String> received() throws IOException {
        return Monitoring.alerts(cluster.config()).alerts().stream().filter(a -> !a.receivedAt().isBefore(causesStarted))
                .map(a -> "+" + secondsSince(causesStarted, a.receivedAt()) + " s " + a.status() + " " + a.name() + " " + a.labels().get("node"))
                .distinct().toList();
    }

    private boolean await(Duration timeout, String status, Instant since) throws IOException {
        Instant deadline = Instant.now().plus(timeout);
        while (true) {
            AlertLog log = Monitoring.alerts(cluster.config());
            boolean all = true;
            for (Expected e : expected) {
                Optional<AlertLog.Received> r = log.first(e.alert, status, "node", e.node.name(), since);
                if (status.equals("firing")) {
                    e.fired = r;
                } else {
                    e.resolved = r;
                }
                all &= r.isPresent();
            }
            if (all || Instant.now().isAfter(deadline)) {
                return all;
            }
            sleep(Duration.ofSeconds(10));
        }
    }

    /** The chain a rule commented with the policy's name jumps to ({@code ... policy NS/NAME" -j NPM-PI-...}); null if none yet. */
    static String policyChain(String save, String policy) {
        Matcher m = Pattern.compile("--comment \"npm:\\S+ policy " + Pattern.quote(policy) + "\" -j (\\S+)").matcher(save);
        return m.find() ? m.group(1) : null;
    }

    /** The fault table: the node's input hook rejects TCP from {@code prometheusIp} to the agent's metrics port. */
    static String rejectPrometheus(String prometheusIp) {
        return "table inet " + FAULT_TABLE + " {\n"
                + "  chain input {\n"
                + "    type filter hook input priority -300; policy accept;\n"
                + "    ip saddr " + prometheusIp + " tcp dport " + METRICS_PORT + " reject with tcp reset\n"
                + "  }\n"
                + "}\n";
    }

    /** The wrapper over xtables-nft-multi: {@code *-restore} waits, then everything runs the real binary under its own name. */
    static String slowWrapper() {
        return "#!/bin/bash\n"
                + "# node-e2e --alerts: every restore " + DELAY_SECONDS + " s slower; the rest as it was.\n"
                + "case \"$0\" in *-restore) sleep " + DELAY_SECONDS + " ;; esac\n"
                + "exec -a \"$0\" /tmp/xtables-nft-multi.real \"$@\"\n";
    }

    /**
     * The wrapper bind-mounted over the agent container's xtables-nft-multi on the first node. Through the container's
     * root (/proc/PID/root): the real binary, the wrapper and the host's mount and umount (the image has none; the host
     * is the same Debian release) into its /tmp, an emptyDir; then the bind mount, inside the container's mount namespace
     * and its PID namespace too (libmount reads /proc/self, which the container's /proc shows only to its own processes).
     */
    private void slowRestores() throws Exception {
        String pod = k("-n", "kube-system", "get", "pods", "-l", "app.kubernetes.io/name=npm-agent", "--field-selector", "spec.nodeName=" + slow.name(),
                "-o", "jsonpath={.items[0].metadata.name}");
        agentPid = NodeE2eTest.containerPid("kube-system", pod);
        Path root = Path.of("/proc", agentPid, "root");
        Path tmp = root.resolve("tmp");
        Files.copy(root.resolve("usr/sbin/xtables-nft-multi"), tmp.resolve("xtables-nft-multi.real"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        for (String tool : List.of("mount", "umount")) {
            Files.copy(Path.of("/usr/bin", tool), tmp.resolve(tool), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        Files.writeString(tmp.resolve("slow-xtables"), slowWrapper());
        cluster.must(List.of("chmod", "755", tmp.resolve("slow-xtables").toString(), tmp.resolve("xtables-nft-multi.real").toString()));
        cluster.must(List.of("nsenter", "-t", agentPid, "-m", "-p", "--", "/tmp/mount", "--bind", "/tmp/slow-xtables", "/usr/sbin/xtables-nft-multi"));
    }

    /** One step of the churn: the policy on the labelled pod of the first node created if absent, deleted if present. */
    private void churnOnce() {
        try {
            if (cluster.kubectlRun("get", "networkpolicy", "-n", NAMESPACE, "alerts-churn").ok()) {
                k("delete", "networkpolicy", "-n", NAMESPACE, "alerts-churn");
            } else {
                apply("""
                        apiVersion: networking.k8s.io/v1
                        kind: NetworkPolicy
                        metadata: {name: alerts-churn, namespace: node-e2e}
                        spec:
                          podSelector: {matchLabels: {alerts-churn: "on"}}
                          ingress:
                            - ports: [{port: 8080}]
                        """);
            }
        } catch (RuntimeException e) {
            NodeE2eTest.say("alerts: churn: " + e.getMessage());
        }
    }

    private String k(String... args) {
        return cluster.kubectl(args).strip();
    }

    private void apply(String yaml) {
        cluster.must(List.of(cluster.bin("kubectl").toString(), "--kubeconfig", cluster.config().adminKubeconfig().toString(), "apply", "-f", "-"), yaml);
    }

    static long secondsSince(Instant from, Instant to) {
        return Duration.between(from, to).toSeconds();
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
