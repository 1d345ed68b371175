package io.npmagent.agent.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.npmagent.harness.monitoring.PodMonitorScrapeConfig;
import io.npmagent.harness.monitoring.PrometheusConfig;
import io.npmagent.harness.monitoring.PrometheusRuleFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The scrape job a Prometheus without the operator runs for the shipped PodMonitor ({@link PodMonitorScrapeConfig}):
 * it selects the DaemonSet's pods by the monitor's labels and port, names the job by the pods' jobLabel (what the
 * alerts select on) and carries the monitor's node relabeling; promtool accepts it beside the derived rules.
 */
class ScrapeConfigTest {
    @TempDir
    Path dir;

    @Test
    void theShippedPodMonitorBecomesTheOperatorsScrapeJob() {
        List<Map<String, Object>> jobs = PodMonitorScrapeConfig.of(DeployManifests.podMonitor(), "/etc/kubeconfig");
        assertThat(jobs).singleElement().satisfies(job -> {
            assertThat(job.get("job_name")).isEqualTo("podMonitor/kube-system/npm-agent/0");
            assertThat(job.get("scrape_interval")).isEqualTo("30s");
            assertThat(job.get("metrics_path")).isEqualTo("/metrics");
            assertThat(job.get("kubernetes_sd_configs")).isEqualTo(List.of(Map.of(
                    "role", "pod", "kubeconfig_file", "/etc/kubeconfig", "namespaces", Map.of("names", List.of("kube-system")))));
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> relabel = (List<Map<String, Object>>) job.get("relabel_configs");
            String podLabel = DeployManifests.daemonSet().getSpec().getTemplate().getMetadata().getLabels().get("app.kubernetes.io/name");
            String port = DeployManifests.agentContainer().getPorts().get(0).getName();
            assertThat(relabel).contains(
                    Map.of("action", "keep", "source_labels", List.of("__meta_kubernetes_pod_label_app_kubernetes_io_name",
                            "__meta_kubernetes_pod_labelpresent_app_kubernetes_io_name"), "regex", "(" + podLabel + ");true"),
                    Map.of("action", "keep", "source_labels", List.of("__meta_kubernetes_pod_container_port_name"), "regex", port),
                    Map.of("source_labels", List.of("__meta_kubernetes_pod_label_app_kubernetes_io_name"), "target_label", "job",
                            "regex", "(.+)", "replacement", "${1}"));
            assertThat(relabel.get(relabel.size() - 1)).as("the monitor's own relabeling, last")
                    .isEqualTo(Map.of("source_labels", List.of("__meta_kubernetes_pod_node_name"), "target_label", "node"));
        });
    }

    @Test
    void aPodMonitorFieldNotTranslatedIsRefusedByName() {
        Map<String, Object> pm = new LinkedHashMap<>(DeployManifests.podMonitor());
        @SuppressWarnings("unchecked")
        Map<String, Object> spec = new LinkedHashMap<>((Map<String, Object>) pm.get("spec"));
        spec.put("podTargetLabels", List.of("app"));
        pm.put("spec", spec);
        assertThatThrownBy(() -> PodMonitorScrapeConfig.of(pm, "/k")).hasMessageContaining("kube-system/npm-agent spec.podTargetLabels");
    }

    @Test
    void promtoolAcceptsTheClustersConfigurationWithTheDerivedRules() throws Exception {
        Path kubeconfig = Files.writeString(dir.resolve("kubeconfig"), "apiVersion: v1\nkind: Config\n");
        Path rules = PrometheusRuleFile.write(DeployManifests.dir().resolve(DeployManifests.PROMETHEUS_RULE), dir.resolve("npm-agent-rules.yaml"));
        Files.writeString(dir.resolve("prometheus.yml"), PrometheusConfig.of(DeployManifests.podMonitor(), kubeconfig.toString(),
                dir.relativize(rules), Optional.of("127.0.0.1:9093")));

        Promtool r = Promtool.run(dir, "check", "config", "prometheus.yml");
        assertThat(r.exit()).as(r.output()).isZero();
        assertThat(r.output()).contains("SUCCESS: 1 rule files found").contains("SUCCESS: " + MonitoringManifestsTest.alerts().size() + " rules found");
    }
}
