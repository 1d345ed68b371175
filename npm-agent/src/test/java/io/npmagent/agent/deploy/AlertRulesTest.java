package io.npmagent.agent.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.harness.controlplane.KubeBinaries;
import io.npmagent.harness.monitoring.PrometheusRuleFile;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The shipped alerts evaluated by Prometheus' own rule engine: {@code promtool} (Prometheus 3.16.0, built from
 * its module by {@code pipelines/kube-binaries promtool}) checks the rule file the PrometheusRule stands for,
 * and runs {@code src/test/resources/promtool/alerts-test.yaml}, in which every alert fires under series made
 * to fire it (labels and rendered annotations compared, not before its {@code for:}) and stays quiet under
 * series close to its threshold. A missing promtool fails the test, never skips it.
 */
class AlertRulesTest {
    private static final String RULES = "npm-agent-rules.yaml";
    private static final String TESTS = "alerts-test.yaml";

    @TempDir
    static Path dir;

    @BeforeAll
    static void shippedRulesBesideTheirTests() throws IOException {
        KubeBinaries.onRequest("promtool"); // missing: the test fails here, never skips
        PrometheusRuleFile.write(DeployManifests.dir().resolve(DeployManifests.PROMETHEUS_RULE), dir.resolve(RULES));
        try (InputStream in = Objects.requireNonNull(AlertRulesTest.class.getResourceAsStream("/promtool/" + TESTS))) {
            Files.copy(in, dir.resolve(TESTS));
        }
    }

    @Test
    void promtoolAcceptsTheRulesAsShipped() throws Exception {
        Promtool r = Promtool.run(dir, "check", "rules", RULES);
        assertThat(r.exit()).as(r.output()).isZero();
        assertThat(r.output()).contains("SUCCESS: " + MonitoringManifestsTest.alerts().size() + " rules found");
    }

    @Test
    void everyAlertFiresAndStaysQuietWhereItsTestsSay() throws Exception {
        Promtool r = Promtool.run(dir, "test", "rules", TESTS);
        assertThat(r.exit()).as(r.output()).isZero();
        assertThat(r.output()).contains("SUCCESS");
    }

    @Test
    void everyAlertHasACaseInWhichItFiresAndOneInWhichItDoesNot() throws IOException {
        Set<String> shipped = MonitoringManifestsTest.alerts().stream().map(a -> (String) a.get("alert"))
                .collect(Collectors.toCollection(TreeSet::new));
        Set<String> fired = new TreeSet<>();
        Set<String> quiet = new TreeSet<>();
        for (Map<String, Object> group : listOf(testFile(), "tests")) {
            for (Map<String, Object> check : listOf(group, "alert_rule_test")) {
                String alert = (String) check.get("alertname");
                (listOf(check, "exp_alerts").isEmpty() ? quiet : fired).add(alert);
            }
        }
        assertThat(fired).as("alerts a test fires").isEqualTo(shipped);
        assertThat(quiet).as("alerts a test keeps quiet").isEqualTo(shipped);
    }

    /** The tests above mean something only if promtool fails them when a rule changes under them. */
    @Test
    void aRuleChangedUnderItsTestsFailsThem() throws Exception {
        Map<String, UnaryOperator<String>> mutations = Map.of(
                "NpmAgentIptablesRestoreSlow", rules -> after(rules, "npm_linux_iptables_restore_latency_seconds_bucket", ") > 5", ") > 10"),
                "NpmAgentDown", rules -> after(rules, "up{job=\"npm-agent\"} == 0", "for: 5m", "for: 10m"),
                "NpmAgentApplyFailing", rules -> after(rules, "npm_apply_failing_parts{", "job=\"npm-agent\"", "job=\"npm\""),
                "NpmAgentPendingQueueBacklog", rules -> after(rules, "NpmAgentPendingQueueBacklog", ">= 100", "> 100"));
        String shipped = Files.readString(dir.resolve(RULES));
        for (var m : mutations.entrySet()) {
            Path mutated = Files.createTempDirectory(dir, "mutated");
            String rules = m.getValue().apply(shipped);
            assertThat(rules).as("the mutation of " + m.getKey() + " changes the rules").isNotEqualTo(shipped);
            Files.writeString(mutated.resolve(RULES), rules);
            Files.copy(dir.resolve(TESTS), mutated.resolve(TESTS));
            Promtool r = Promtool.run(mutated, "test", "rules", TESTS);
            assertThat(r.exit()).as(m.getKey() + " mutated").isNotZero();
            assertThat(r.output()).contains("FAILED").contains("alertname: " + m.getKey());
        }
    }

    /** {@code rules} with the first {@code from} after {@code marker} replaced by {@code to}. */
    private static String after(String rules, String marker, String from, String to) {
        int at = rules.indexOf(from, rules.indexOf(marker));
        return at < 0 ? rules : rules.substring(0, at) + to + rules.substring(at + from.length());
    }

    private static Map<String, Object> testFile() throws IOException {
        return new Yaml(new SafeConstructor(new LoaderOptions())).load(Files.readString(dir.resolve(TESTS)));
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> listOf(Map<String, Object> map, String key) {
        Object v = map.get(key);
        return v == null ? List.of() : (List<Map<String, Object>>) v;
    }
}
