package io.npmagent.harness.cluster;

import io.npmagent.harness.controlplane.KubeBinaries;
import io.npmagent.harness.monitoring.AlertLog;
import io.npmagent.harness.monitoring.AlertReceiverMain;
import io.npmagent.harness.monitoring.AlertmanagerConfig;
import io.npmagent.harness.monitoring.PrometheusApi;
import io.npmagent.harness.process.Await;
import io.npmagent.harness.controlplane.GoModules;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The cluster's monitoring ({@code pipelines/cluster up --monitoring}) as operators run it: the Prometheus Operator
 * (pipelines/kube-binaries prometheus-operator, a node process of the first node with the admin's kubeconfig, its
 * CRDs from the same module) and {@code npm-agent/deploy/monitoring/} applied as shipped, which the operator turns
 * into Prometheus's scrape job and rule file. The Prometheus object ({@code pipelines/cluster-manifests/prometheus.yaml})
 * selects every PodMonitor and PrometheusRule; its pod runs on the first node from images built here of the
 * upstream binaries (Prometheus, the operator's config reloader). Prometheus finds the agents' pods through the
 * API server and scrapes every node's agent from its pod's address. Alertmanager is a node process on the first
 * node's address and sends every alert, and its resolution, to a webhook receiver on that node's loopback
 * ({@link AlertReceiverMain}), which records them in {@code STATE/monitoring/alerts.jsonl} ({@link #alerts}).
 * From the host: Prometheus at 127.0.0.1:(NPM_AGENT_CLUSTER_PORT + 1), Alertmanager at 127.0.0.1:(NPM_AGENT_CLUSTER_PORT + 2).
 */
public final class Monitoring implements Step.ClusterAction {
    /** The shipped dashboard, relative to the checkout: what {@code pipelines/cluster dashboard} and node-e2e ask. */
    public static final String DASHBOARD = "npm-agent/deploy/grafana/dashboard.json";
    static final String PROMETHEUS_IMAGE = "quay.io/prometheus/prometheus";
    static final String RELOADER_IMAGE = "quay.io/prometheus-operator/prometheus-config-reloader";
    static final String OPERATOR_MODULE = "github.com/prometheus-operator/prometheus-operator";
    /** What the operator names the StatefulSet of the Prometheus object {@code monitoring/cluster} (cluster-manifests/prometheus.yaml). */
    static final String STATEFULSET = "prometheus-cluster";
    static final int PROMETHEUS_PORT = 9090;
    static final int ALERTMANAGER_PORT = 9093;
    static final int RECEIVER_PORT = 9095;
    static final int OPERATOR_PORT = 9096;
    /** The operator's StatefulSet pulls nothing (the images are imported), but Prometheus replays its WAL and waits for the reloader. */
    private static final Duration READY = Duration.ofSeconds(180);

    @Override
    public void up(Cluster c) throws Exception {
        Path alertmanager = KubeBinaries.onRequest("alertmanager");
        Path operator = KubeBinaries.onRequest("prometheus-operator");
        Path dir = dir(c.config());
        Files.createDirectories(dir);
        Node node = c.first();
        String prometheusImage = image(c, node, KubeBinaries.onRequest("prometheus"), PROMETHEUS_IMAGE);
        String reloaderImage = image(c, node, KubeBinaries.onRequest("prometheus-config-reloader"), RELOADER_IMAGE);

        Files.writeString(dir.resolve("alertmanager.yml"), AlertmanagerConfig.webhook("http://127.0.0.1:" + RECEIVER_PORT + "/alerts"));
        String java = ProcessHandle.current().info().command().orElse("java");
        node.daemon("alert-receiver", c.log(node, "alert-receiver"), List.of(java, "-Xmx64m", "-cp", System.getProperty("java.class.path"),
                AlertReceiverMain.class.getName(), Integer.toString(RECEIVER_PORT), alertLog(c.config()).toString())).start();
        // On the node's address, where the Prometheus pod reaches it; --cluster.listen-address empty: one Alertmanager, no gossip.
        node.daemon("alertmanager", c.log(node, "alertmanager"), List.of(alertmanager.toString(),
                "--config.file=" + dir.resolve("alertmanager.yml"), "--storage.path=" + dir.resolve("alertmanager"),
                "--web.listen-address=" + node.ip() + ":" + ALERTMANAGER_PORT, "--cluster.listen-address=")).start();

        // Server-side: the Prometheus CRD is larger than the annotation a client-side apply keeps.
        Path crds = crds(c);
        c.kubectl("apply", "--server-side", "-f", crds.toString());
        c.kubectl("wait", "--for=condition=Established", "--timeout=60s", "-f", crds.toString());
        node.daemon("prometheus-operator", c.log(node, "prometheus-operator"), List.of(operator.toString(),
                "--web.listen-address=127.0.0.1:" + OPERATOR_PORT, "--prometheus-config-reloader=" + reloaderImage))
                .env("KUBECONFIG", c.config().controlPlaneDir().resolve("admin.kubeconfig").toString()).start();
        c.kubectl("apply", "-f", c.checkout().resolve("npm-agent/deploy/monitoring").toString());
        Files.writeString(manifest(c.config()), Files.readString(c.checkout().resolve("pipelines/cluster-manifests/prometheus.yaml"))
                .replace("@PROMETHEUS_IMAGE@", prometheusImage)
                .replace("@PROMETHEUS_VERSION@", prometheusImage.substring(prometheusImage.lastIndexOf(':') + 1))
                .replace("@FIRST_NODE@", node.name())
                .replace("@ALERTMANAGER@", node.ip()));
        c.kubectl("apply", "-f", manifest(c.config()).toString());
        c.awaitKubectl(READY, "the operator's Prometheus StatefulSet Ready (its log: " + c.log(node, "prometheus-operator") + ")",
                "-n", "monitoring", "rollout", "status", "statefulset/" + STATEFULSET, "--timeout=2s");

        String serviceIp = c.kubectl("-n", "monitoring", "get", "service", "prometheus", "-o", "jsonpath={.spec.clusterIP}").strip();
        HostBridge.start(c, "prometheus", prometheusPort(c.config()), serviceIp, PROMETHEUS_PORT);
        HostBridge.start(c, "alertmanager", alertmanagerPort(c.config()), node.ip(), ALERTMANAGER_PORT);
        PrometheusApi api = prometheus(c.config());
        Await.until(READY, "Prometheus ready at " + api.base(), api::ready, () -> "the operator's log: " + c.log(node, "prometheus-operator"));
        c.awaitCommand(READY, "Alertmanager ready", node.inside(List.of("socat", "-u", "OPEN:/dev/null", "TCP:" + node.ip() + ":" + ALERTMANAGER_PORT)));
        Cluster.log("Prometheus (the operator's) " + api.base() + ", Alertmanager http://127.0.0.1:" + alertmanagerPort(c.config())
                + ", alerts received in " + alertLog(c.config()));
    }

    /** The address Prometheus scrapes from: its pod's (the StatefulSet's one replica). */
    public static String prometheusPodIp(Cluster c) {
        return c.kubectl("-n", "monitoring", "get", "pod", STATEFULSET + "-0", "-o", "jsonpath={.status.podIP}").strip();
    }

    /**
     * An image of {@code binary} at {@code /bin/NAME} (where upstream's image has it, and not under the data directory
     * the operator mounts at {@code /prometheus}) tagged with the version it reports, imported into {@code node}.
     */
    private static String image(Cluster c, Node node, Path binary, String repository) throws IOException {
        String version = "v" + UpstreamImages.first(Pattern.compile("version ([0-9][0-9.]*)"),
                c.must("sh", "-c", "\"$0\" --version 2>&1", binary.toString()).stdout(), binary + " --version");
        Images.load(c, node, BinaryImage.archive(c, binary, version, List.of("/bin/" + binary.getFileName())), repository);
        return repository + ":" + version;
    }

    /** The operator's CRDs as its pinned module publishes them ({@code example/prometheus-operator-crd/}). */
    private static Path crds(Cluster c) throws IOException {
        return GoModules.dir(c.checkout().resolve("pipelines/upstream/prometheus-operator"), OPERATOR_MODULE)
                .resolve("example/prometheus-operator-crd");
    }

    /** Whether {@code up --monitoring} started it. */
    public static boolean on(ClusterConfig config) {
        return Files.exists(manifest(config));
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

    static Path manifest(ClusterConfig config) {
        return dir(config).resolve("prometheus.yaml");
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
}
