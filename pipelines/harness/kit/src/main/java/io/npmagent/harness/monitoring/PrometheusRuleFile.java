package io.npmagent.harness.monitoring;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.nodes.Tag;
import org.yaml.snakeyaml.representer.Representer;

/**
 * The Prometheus rule file a shipped PrometheusRule ({@code npm-agent/deploy/monitoring/prometheusrule.yaml})
 * stands for: its {@code spec}, which is a rule file's {@code groups:} as the Prometheus Operator hands it to
 * Prometheus. The one place the rules leave the manifest, for {@code promtool} (AlertRulesTest), so what it tests
 * is what an operator applies; the cluster's Prometheus gets them from the operator itself.
 */
public final class PrometheusRuleFile {
    private PrometheusRuleFile() {}

    /** The rule file's text; an error naming the file when it is not one PrometheusRule with groups. */
    public static String of(Path prometheusRule) throws IOException {
        Object doc = new Yaml(new SafeConstructor(new LoaderOptions())).load(Files.readString(prometheusRule));
        if (!(doc instanceof Map<?, ?> manifest) || !"PrometheusRule".equals(manifest.get("kind"))
                || !(manifest.get("spec") instanceof Map<?, ?> spec) || !(spec.get("groups") instanceof List<?> groups) || groups.isEmpty()) {
            throw new IOException(prometheusRule + ": not a PrometheusRule with spec.groups");
        }
        DumperOptions options = new DumperOptions();
        options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        options.setWidth(Integer.MAX_VALUE);
        return "# Derived from " + prometheusRule.getFileName() + "'s spec (io.npmagent.harness.monitoring.PrometheusRuleFile); edit that file, not this.\n"
                + new Yaml(new BlockStrings(options), options).dump(Map.of("groups", groups));
    }

    /** Multi-line strings (the alerts' expressions) as literal blocks, as written in the manifest, not as quoted one-liners. */
    private static final class BlockStrings extends Representer {
        BlockStrings(DumperOptions options) {
            super(options);
            representers.put(String.class, data -> {
                String s = (String) data;
                return representScalar(Tag.STR, s, s.contains("\n") ? DumperOptions.ScalarStyle.LITERAL : DumperOptions.ScalarStyle.PLAIN);
            });
        }
    }

    /** Writes the rule file to {@code to}; returns {@code to}. */
    public static Path write(Path prometheusRule, Path to) throws IOException {
        Files.writeString(to, of(prometheusRule));
        return to;
    }
}
