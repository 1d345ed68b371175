package io.npmagent.agent.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.npmagent.agent.config.AgentConfig;
import io.npmagent.agent.config.ConfigReload;
import io.npmagent.harness.controlplane.KubeBinaries;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Helm chart ({@code npm-agent/deploy/helm/npm-agent}) rendered by helm itself (v4.3.2, built from its module
 * by {@code pipelines/kube-binaries helm}) against the plain manifests: with its default values it renders exactly
 * {@code npm-agent/deploy/*.yaml}, object by object (and with monitoring on, {@code monitoring/} too), and each
 * value changes only what it names. A configuration change rolls the pods exactly when the agent itself would say
 * "restart needed" for it ({@link ConfigReload}), key by key. A missing helm fails the test, never skips it.
 */
class ChartRenderTest {
    @TempDir
    static Path dir;
    private static Path helm;
    private static Path chart;

    @BeforeAll
    static void helmAndTheChart() throws IOException {
        helm = KubeBinaries.onRequest("helm");
        chart = DeployManifests.dir().resolve("helm/npm-agent");
    }

    @Test
    void theDefaultValuesRenderExactlyThePlainManifests() throws Exception {
        assertThat(byName(render(""))).isEqualTo(byName(plain(DeployManifests.CORE_MANIFESTS)));
    }

    @Test
    void monitoringOnAddsExactlyTheShippedPodMonitorAndPrometheusRule() throws Exception {
        List<String> files = new ArrayList<>(DeployManifests.CORE_MANIFESTS);
        files.addAll(List.of(DeployManifests.POD_MONITOR, DeployManifests.PROMETHEUS_RULE));
        assertThat(byName(render("monitoring: {enabled: true}"))).isEqualTo(byName(plain(files)));

        Map<String, Map<String, Object>> labelled = byName(render("monitoring: {enabled: true, labels: {release: kube-prometheus-stack}}"));
        for (String kind : List.of("PodMonitor", "PrometheusRule")) {
            Map<String, Object> o = labelled.get(kind + " kube-system/npm-agent");
            assertThat(MonitoringManifestsTest.map(MonitoringManifestsTest.map(o, "metadata"), "labels"))
                    .containsEntry("release", "kube-prometheus-stack").containsEntry("app.kubernetes.io/name", "npm-agent");
        }
    }

    @Test
    void theImageResourcesAndConfigurationChangeOnlyWhatTheyName() throws Exception {
        Map<String, Map<String, Object>> rendered = byName(render("""
                image: registry.example/npm-agent:1.2.3
                resources: {limits: {memory: 1Gi}}
                config: {Backend: nft, Toggles: {NetPolInBackground: false}}
                """));
        Map<String, Map<String, Object>> shipped = byName(plain(DeployManifests.CORE_MANIFESTS));
        assertThat(rendered.keySet()).isEqualTo(shipped.keySet());

        JsonObject config = JsonParser.parseString(configFile(rendered)).getAsJsonObject();
        JsonObject expected = JsonParser.parseString(configFile(shipped)).getAsJsonObject();
        expected.addProperty("Backend", "nft");
        expected.getAsJsonObject("Toggles").addProperty("NetPolInBackground", false);
        assertThat(config).isEqualTo(expected);

        Map<String, Object> container = container(rendered);
        assertThat(container.get("image")).isEqualTo("registry.example/npm-agent:1.2.3");
        assertThat(MonitoringManifestsTest.map(container, "resources")).isEqualTo(Map.of(
                "requests", Map.of("cpu", "100m", "memory", "256Mi"), "limits", Map.of("cpu", "1", "memory", "1Gi")));
        // Everything else in the DaemonSet is as shipped, but for the restart annotation (Backend needs a restart).
        Map<String, Object> ds = copy(rendered.get("DaemonSet kube-system/npm-agent"));
        Map<String, Object> c = container(Map.of("DaemonSet kube-system/npm-agent", ds));
        c.put("image", container(shipped).get("image"));
        c.put("resources", container(shipped).get("resources"));
        MonitoringManifestsTest.map(podTemplate(ds), "metadata").remove("annotations");
        assertThat(ds).isEqualTo(shipped.get("DaemonSet kube-system/npm-agent"));
        assertThat(rendered.get("ClusterRole npm-agent")).isEqualTo(shipped.get("ClusterRole npm-agent"));
    }

    /** Every key of npm-agent.json, changed alone from what configmap.yaml ships: the pods roll exactly when the agent cannot apply it live. */
    @Test
    void aConfigurationChangeRollsThePodsExactlyWhenTheAgentNeedsARestartForIt() throws Exception {
        AgentConfig shipped = AgentConfig.parse(DeployManifests.configFile()).config();
        Map<String, Object> defaults = shipped.byKey();
        Map<String, String> changed = new LinkedHashMap<>();
        for (var e : defaults.entrySet()) {
            changed.put(e.getKey(), changedValue(e.getKey(), e.getValue()));
        }
        for (var e : changed.entrySet()) {
            String key = e.getKey();
            String value = e.getValue().matches("true|false|\\d+") ? e.getValue() : "\"" + e.getValue() + "\"";
            // NetPolInBackground lives under Toggles in the shipped file, as in NPM's (the agent refuses it in both places);
            // Flows.X is the key X of the Flows object.
            String toggle = key.startsWith("Toggles.") ? key.substring(8) : key.equals("NetPolInBackground") ? key : null;
            String values = toggle != null ? "config: {Toggles: {" + toggle + ": " + value + "}}"
                    : key.startsWith("Flows.") ? "config: {Flows: {" + key.substring(6) + ": " + value + "}}"
                    : "config: {" + key + ": " + value + "}";
            Map<String, Map<String, Object>> rendered = byName(render(values));
            AgentConfig after = AgentConfig.parse(configFile(rendered)).config();
            ConfigReload reload = ConfigReload.between(shipped, after);
            assertThat(reload.applied().size() + reload.restartNeeded().size()).as(key + " changed alone").isEqualTo(1);
            Object annotations = MonitoringManifestsTest.map(podTemplate(rendered.get("DaemonSet kube-system/npm-agent")), "metadata").get("annotations");
            boolean rolls = annotations instanceof Map<?, ?> a && a.containsKey("npm-agent.io/restart-config");
            assertThat(rolls).as(key + " -> " + e.getValue() + ": the agent says " + reload).isEqualTo(!reload.restartNeeded().isEmpty());
        }
    }

    /** A valid value other than the default, for one key of the configuration. */
    private static String changedValue(String key, Object value) {
        if (value instanceof Boolean b) {
            return String.valueOf(!b);
        }
        if (value instanceof Number n) {
            return String.valueOf(n.longValue() + 1);
        }
        return switch (key) {
            case "Backend" -> "nft";
            case "LogLevel" -> "debug";
            case "EdtFlowControl" -> "off";
            case "ListeningAddress", "DebugListeningAddress" -> "127.0.0.2";
            default -> "/elsewhere";
        };
    }

    private static String configFile(Map<String, Map<String, Object>> objects) {
        return (String) MonitoringManifestsTest.map(objects.get("ConfigMap kube-system/npm-agent-config"), "data").get("npm-agent.json");
    }

    private static Map<String, Object> podTemplate(Map<String, Object> ds) {
        return MonitoringManifestsTest.map(MonitoringManifestsTest.map(ds, "spec"), "template");
    }

    private static Map<String, Object> container(Map<String, Map<String, Object>> objects) {
        return MonitoringManifestsTest.list(MonitoringManifestsTest.map(podTemplate(objects.get("DaemonSet kube-system/npm-agent")), "spec"), "containers").get(0);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> copy(Map<String, Object> o) {
        return (Map<String, Object>) deepCopy(o);
    }

    private static Object deepCopy(Object o) {
        if (o instanceof Map<?, ?> m) {
            Map<String, Object> out = new LinkedHashMap<>();
            m.forEach((k, v) -> out.put((String) k, deepCopy(v)));
            return out;
        }
        if (o instanceof List<?> l) {
            return new ArrayList<>(l.stream().map(ChartRenderTest::deepCopy).toList());
        }
        return o;
    }

    private static List<Map<String, Object>> plain(List<String> files) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (String f : files) {
            out.addAll(DeployManifests.plainDocuments(DeployManifests.text(f), f));
        }
        return out;
    }

    /** Objects by "Kind namespace/name" (cluster-scoped: "Kind name"); two of one name fail. */
    private static Map<String, Map<String, Object>> byName(List<Map<String, Object>> objects) {
        Map<String, Map<String, Object>> out = new LinkedHashMap<>();
        for (Map<String, Object> o : objects) {
            Map<String, Object> meta = MonitoringManifestsTest.map(o, "metadata");
            String name = o.get("kind") + " " + (meta.get("namespace") == null ? "" : meta.get("namespace") + "/") + meta.get("name");
            assertThat(out.put(name, o)).as(name + " twice").isNull();
        }
        return out;
    }

    /** {@code helm template} of the chart with these values, as the release npm-agent in kube-system. */
    private static List<Map<String, Object>> render(String values) throws IOException, InterruptedException {
        Path file = Files.createTempFile(dir, "values", ".yaml");
        Files.writeString(file, values);
        Path err = Files.createTempFile(dir, "helm", ".err");
        Process p = new ProcessBuilder(helm.toString(), "template", "npm-agent", chart.toString(), "--namespace", "kube-system", "--values", file.toString())
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile())).redirectError(err.toFile()).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as("helm template with " + values + ": " + Files.readString(err)).isZero();
        return DeployManifests.plainDocuments(out, "helm template");
    }
}
