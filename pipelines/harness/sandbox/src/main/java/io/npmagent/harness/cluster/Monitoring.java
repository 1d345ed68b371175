package io.npmagent.harness.cluster;

import io.npmagent.harness.controlplane.KubeBinaries;
import io.npmagent.harness.monitoring.AlertLog;
import io.npmagent.harness.monitoring.AlertReceiverMain;
import io.npmagent.harness.monitoring.AlertmanagerConfig;
import io.npmagent.harness.monitoring.PrometheusApi;
import io.npmagent.harness.monitoring.PrometheusConfig;
import io.npmagent.harness.monitoring.PrometheusRuleFile;
import io.npmagent.harness.process.Await;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The cluster's monitoring ({@code pipelines/cluster up --monitoring}), the shipped {@code npm-agent/deploy/monitoring/}
 * run by upstream's Prometheus and Alertmanager (pipelines/kube-binaries prometheus alertmanager) as node processes of
 * the first node, on its loopback. The Prometheus Operator does not run here yet (the proxy serves one release of its
 * main module, v0.85.0, which builds), so the PodMonitor and PrometheusRule are translated as the operator would ({@link PrometheusConfig}): Prometheus finds
 * the agents' pods through the API server and scrapes every node's agent over the underlay. Alertmanager sends every
 * alert, and its resolution, to a webhook receiver on the same loopback ({@link AlertReceiverMain}), which records
 * them in {@code STATE/monitoring/alerts.jsonl} ({@link #alerts}). From the host: Prometheus at
 * 127.0.0.1:(NPM_AGENT_CLUSTER_PORT + 1), Alertmanager at 127.0.0.1:(NPM_AGENT_CLUSTER_PORT + 2).
 */
public final class Monitoring implements Step.ClusterAction {
    /** The shipped dashboard, relative to the checkout: what {@code pipelines/cluster dashboard} and node-e2e ask. */
    public static final String DASHBOARD = "npm-agent/deploy/grafana/dashboard.json";
    static final int PROMETHEUS_PORT = 9090;
    static final int ALERTMANAGER_PORT = 9093;
    static final int RECEIVER_PORT = 9095;
    private static final Duration READY = Duration.ofSeconds(90);

    @Override
    public void up(Cluster c) throws Exception {
        Path prometheus = KubeBinaries.onRequest("prometheus");
        Path alertmanager = KubeBinaries.onRequest("alertmanager");
        Path dir = dir(c.config());
        Files.createDirectories(dir);
        Path deploy = c.checkout().resolve("npm-agent/deploy/monitoring");
        Path rules = PrometheusRuleFile.write(deploy.resolve("prometheusrule.yaml"), dir.resolve("npm-agent-rules.yaml"));
        Files.writeString(dir.resolve("prometheus.yml"), PrometheusConfig.of(podMonitor(deploy.resolve("podmonitor.yaml")),
                c.config().controlPlaneDir().resolve("admin.kubeconfig").toString(), rules, Optional.of("127.0.0.1:" + ALERTMANAGER_PORT)));
        Files.writeString(dir.resolve("alertmanager.yml"), AlertmanagerConfig.webhook("http://127.0.0.1:" + RECEIVER_PORT + "/alerts"));

        Node node = c.first();
        String java = ProcessHandle.current().info().command().orElse("java");
        node.daemon("alert-receiver", c.log(node, "alert-receiver"), List.of(java, "-Xmx64m", "-cp", System.getProperty("java.class.path"),
                AlertReceiverMain.class.getName(), Integer.toString(RECEIVER_PORT), alertLog(c.config()).toString())).start();
        // --cluster.listen-address empty: one Alertmanager, no gossip port on every address.
        node.daemon("alertmanager", c.log(node, "alertmanager"), List.of(alertmanager.toString(),
                "--config.file=" + dir.resolve("alertmanager.yml"), "--storage.path=" + dir.resolve("alertmanager"),
                "--web.listen-address=127.0.0.1:" + ALERTMANAGER_PORT, "--cluster.listen-address=")).start();
        node.daemon("prometheus", c.log(node, "prometheus"), List.of(prometheus.toString(),
                "--config.file=" + dir.resolve("prometheus.yml"), "--storage.tsdb.path=" + dir.resolve("prometheus"),
                "--web.listen-address=127.0.0.1:" + PROMETHEUS_PORT)).start();
        HostBridge.start(c, "prometheus", prometheusPort(c.config()), PROMETHEUS_PORT);
        HostBridge.start(c, "alertmanager", alertmanagerPort(c.config()), ALERTMANAGER_PORT);
        PrometheusApi api = prometheus(c.config());
        Await.until(READY, "Prometheus ready at " + api.base(), api::ready, () -> "its log: " + c.log(node, "prometheus"));
        c.awaitCommand(READY, "Alertmanager ready", node.inside(List.of("socat", "-u", "OPEN:/dev/null", "TCP:127.0.0.1:" + ALERTMANAGER_PORT)));
        Cluster.log("Prometheus " + api.base() + ", Alertmanager http://127.0.0.1:" + alertmanagerPort(c.config())
                + ", alerts received in " + alertLog(c.config()));
    }

    /** Whether {@code up --monitoring} started it. */
    public static boolean on(ClusterConfig config) {
        return Files.exists(dir(config).resolve("prometheus.yml"));
    }

    /** The cluster's Prometheus, from the host. */
    public static PrometheusApi prometheus(ClusterConfig config) {
        return new PrometheusApi(URI.create("http://127.0.0.1:" + prometheusPort(config)));
    }

    /** What the webhook receiver has recorded so far. */
    public static AlertLog alerts(ClusterConfig config) throws IOException {
        return AlertLog.read(alertLog(config));
    }

    static Path dir(ClusterConfig config) {
        return config.state().resolve("monitoring");
    }

    static Path alertLog(ClusterConfig config) {
        return dir(config).resolve("alerts.jsonl");
    }

    static int prometheusPort(ClusterConfig config) {
        return config.hostPort() + 1;
    }

    static int alertmanagerPort(ClusterConfig config) {
        return config.hostPort() + 2;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> podMonitor(Path file) throws IOException {
        return (Map<String, Object>) new Yaml(new SafeConstructor(new LoaderOptions())).load(Files.readString(file));
    }
}
