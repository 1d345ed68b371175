package io.npmagent.harness.monitoring;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * A Prometheus configuration for the shipped monitoring without the Prometheus Operator: the rule file
 * {@link PrometheusRuleFile} derives from the PrometheusRule, the scrape job {@link PodMonitorScrapeConfig}
 * derives from the PodMonitor, and, when given, the Alertmanager it sends alerts to. The intervals are the
 * operator's defaults (30 s scrape and evaluation), so alerts take the time they take where operators run them.
 */
public final class PrometheusConfig {
    public static final String INTERVAL = "30s";

    private PrometheusConfig() {}

    /**
     * The configuration's YAML: {@code podMonitor} (the parsed manifest) discovered through {@code kubeconfig},
     * the rules in {@code ruleFile} (relative to the configuration's directory or absolute), alerts to the
     * Alertmanager at {@code alertmanager} (host:port) if present.
     */
    public static String of(Map<String, Object> podMonitor, String kubeconfig, Path ruleFile, Optional<String> alertmanager) {
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("global", Map.of("scrape_interval", INTERVAL, "evaluation_interval", INTERVAL));
        config.put("rule_files", List.of(ruleFile.toString()));
        alertmanager.ifPresent(am -> config.put("alerting",
                Map.of("alertmanagers", List.of(Map.of("static_configs", List.of(Map.of("targets", List.of(am))))))));
        config.put("scrape_configs", PodMonitorScrapeConfig.of(podMonitor, kubeconfig));
        DumperOptions options = new DumperOptions();
        options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        return "# Derived from npm-agent/deploy/monitoring/ (io.npmagent.harness.monitoring.PrometheusConfig); edit those, not this.\n"
                + new Yaml(options).dump(config);
    }
}
