package io.npmagent.agent.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ContainerPort;
import io.kubernetes.client.openapi.models.V1DaemonSet;
import io.npmagent.agent.config.AgentConfig;
import io.npmagent.dataplane.metrics.Metrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The alerts, the scrape configuration and the dashboard against the agent: every metric they read is
 * one the agent exports (as {@code new Metrics(registry)} registers it, with the suffixes its type
 * gives), every selector is limited to the agent's job, the job is the one the PodMonitor gives, and
 * every alert can be routed and read.
 */
class MonitoringManifestsTest {
    /** Not the agent's, but always there: Prometheus' own series per target. */
    private static final Set<String> PROMETHEUS_SERIES = Set.of("up");
    /** What the alerts must watch (issue #7): restore and apply latency, apply delay, failures, the queue, the agent itself. */
    private static final Set<String> WATCHED = Set.of(
            "npm_linux_iptables_restore_latency_seconds_bucket", "npm_nft_restore_latency_seconds_bucket",
            "npm_bpf_map_update_latency_seconds_bucket", "npm_apply_latency_seconds_bucket", "npm_policy_apply_delay_seconds_bucket",
            "npm_apply_failing_parts", "npm_linux_iptables_restore_failure_total", "npm_nft_restore_failure_total",
            "npm_pending_netpols", "up");
    private static final Set<String> SEVERITIES = Set.of("critical", "warning", "info");
    private static final Pattern BY_LE = Pattern.compile("\\bby\\s*\\(([^)]*)\\)");

    /** The job label of the agents' series: the pods' label the PodMonitor's jobLabel names. */
    private static String job() {
        Map<String, Object> spec = map(DeployManifests.podMonitor(), "spec");
        String jobLabel = (String) spec.get("jobLabel");
        String job = DeployManifests.daemonSet().getSpec().getTemplate().getMetadata().getLabels().get(jobLabel);
        assertThat(job).as("the pods carry the PodMonitor's jobLabel " + jobLabel).isNotBlank();
        return job;
    }

    /** The names derived from the registry are the names its samples take when written out. */
    @Test
    void theSeriesNamesAreThoseTheAgentWrites() {
        Set<String> derived = ExportedMetrics.seriesNames();
        assertThat(derived).contains("npm_apply_latency_seconds_bucket", "npm_apply_failures_total", "npm_pending_netpols")
                .doesNotContain("npm_apply_failures_total_total", "npm_pending_netpols_total", "npm_apply_failures");
        PrometheusRegistry registry = new PrometheusRegistry();
        Metrics metrics = new Metrics(registry);
        metrics.applyLatency.labelValues("bpf").observe(0.01);
        metrics.iptablesRestoreLatency.labelValues("apply").observe(0.1);
        metrics.applyFailures.labelValues("policy").inc();
        metrics.nftRestoreFailures.labelValues("apply").inc();
        metrics.pendingNetPols.set(3);
        metrics.bpfMapPressure.labelValues("npm_policy").set(0.5);
        Set<String> written = ExportedMetrics.sampleNamesWritten(registry);
        assertThat(written).contains("npm_apply_latency_seconds_bucket", "npm_apply_latency_seconds_count", "npm_apply_failures_total",
                "npm_nft_restore_failure_total", "npm_pending_netpols", "npm_bpf_map_pressure");
        assertThat(derived).containsAll(written);
    }

    @Test
    void thePodMonitorScrapesTheAgentsMetricsPort() {
        Map<String, Object> pm = DeployManifests.podMonitor();
        assertThat(pm.get("apiVersion")).isEqualTo("monitoring.coreos.com/v1");
        assertThat(pm.get("kind")).isEqualTo("PodMonitor");
        V1DaemonSet ds = DeployManifests.daemonSet();
        Map<String, Object> spec = map(pm, "spec");
        assertThat(map(spec, "namespaceSelector").get("matchNames")).isEqualTo(List.of(ds.getMetadata().getNamespace()));
        @SuppressWarnings("unchecked")
        Map<String, String> selector = (Map<String, String>) map(spec, "selector").get("matchLabels");
        assertThat(ds.getSpec().getTemplate().getMetadata().getLabels()).containsAllEntriesOf(selector);
        List<Map<String, Object>> endpoints = list(spec, "podMetricsEndpoints");
        assertThat(endpoints).hasSize(1);
        V1Container agent = DeployManifests.agentContainer();
        V1ContainerPort port = agent.getPorts().stream().filter(p -> p.getName().equals(endpoints.get(0).get("port"))).findFirst().orElseThrow();
        assertThat(port.getContainerPort()).isEqualTo(AgentConfig.DEFAULTS.listeningPort());
        assertThat(endpoints.get(0).get("path")).isEqualTo("/metrics");
        assertThat(endpoints.get(0).get("honorLabels")).as("the per-pod counters' namespace and pod kept, not renamed exported_*").isEqualTo(true);
        assertThat(job()).isEqualTo("npm-agent");
    }

    @Test
    void everyAlertReadsOnlyWhatTheAgentExportsOnItsJob() {
        Set<String> exported = allowedSeries();
        Set<String> used = new TreeSet<>();
        String job = job();
        for (Map<String, Object> alert : alerts()) {
            checkQuery((String) alert.get("alert"), (String) alert.get("expr"), exported, job, used);
        }
        assertThat(used).as("the alerts watch").containsAll(WATCHED);
        assertThat(alerts()).extracting(a -> (String) a.get("expr")).anySatisfy(e -> assertThat(e).contains("absent(up{"));
    }

    /** One query reads only exported series, on the agent's job, histograms as quantiles over rates; its metrics go to {@code used}. */
    private static void checkQuery(String where, String expr, Set<String> exported, String job, Set<String> used) {
        Set<String> metrics = PromQl.metricNames(expr);
        assertThat(metrics).as(where + " reads metrics").isNotEmpty();
        assertThat(exported).as(where + ": every metric in " + expr).containsAll(metrics);
        used.addAll(metrics);
        assertSelectorsOnJob(where, expr, job);
        assertHistogramsAreQuantilesOverRates(where, expr);
    }

    @Test
    void everyAlertHasASeverityASummaryAndADescription() {
        Map<String, Object> rule = DeployManifests.prometheusRule();
        assertThat(rule.get("apiVersion")).isEqualTo("monitoring.coreos.com/v1");
        assertThat(rule.get("kind")).isEqualTo("PrometheusRule");
        assertThat(map(rule, "metadata").get("namespace")).isEqualTo(DeployManifests.daemonSet().getMetadata().getNamespace());
        Set<String> names = new HashSet<>();
        for (Map<String, Object> alert : alerts()) {
            String name = (String) alert.get("alert");
            assertThat(name).matches("NpmAgent[A-Za-z]+");
            assertThat(names.add(name)).as(name + " twice").isTrue();
            assertThat(alert).containsOnlyKeys("alert", "expr", "for", "labels", "annotations");
            assertThat((String) alert.get("for")).as(name + ": a duration, so one bad scrape does not page").matches("\\d+[smh]");
            assertThat(map(alert, "labels").get("severity")).as(name + " severity").isIn(SEVERITIES);
            Map<String, Object> annotations = map(alert, "annotations");
            for (String a : List.of("summary", "description")) {
                assertThat((String) annotations.get(a)).as(name + " " + a).isNotBlank();
                assertBalancedTemplates(name, (String) annotations.get(a));
            }
        }
        // Every rule of every group is an alert (no recording rules the checks above would skip).
        for (Map<String, Object> group : list(map(rule, "spec"), "groups")) {
            assertThat((String) group.get("name")).isNotBlank();
            assertThat(list(group, "rules")).allSatisfy(r -> assertThat(r).containsKey("alert"));
        }
    }

    @Test
    void everyDashboardQueryReadsOnlyWhatTheAgentExportsOnItsJob() {
        JsonObject dashboard = DeployManifests.dashboard();
        assertThat(dashboard.get("title").getAsString()).isNotBlank();
        assertThat(dashboard.get("uid").getAsString()).isNotBlank();
        Set<String> exported = allowedSeries();
        String job = job();
        Map<String, String> queries = dashboardQueries(dashboard);
        assertThat(queries).isNotEmpty();
        Set<String> used = new TreeSet<>();
        queries.forEach((where, expr) -> checkQuery(where, expr, exported, job, used));
        assertThat(used).as("the dashboard shows").containsAll(WATCHED);
        for (String h : ExportedMetrics.histograms()) {
            assertThat(used).as("the dashboard shows every histogram").contains(h + "_bucket");
        }
    }

    @Test
    void theDashboardsPanelsAreWellFormed() {
        JsonObject dashboard = DeployManifests.dashboard();
        Set<Integer> ids = new HashSet<>();
        Set<String> titles = new HashSet<>();
        for (JsonObject panel : panels(dashboard)) {
            String title = panel.get("title").getAsString();
            assertThat(ids.add(panel.get("id").getAsInt())).as("panel id of " + title).isTrue();
            JsonObject grid = panel.getAsJsonObject("gridPos");
            assertThat(grid.get("x").getAsInt() + grid.get("w").getAsInt()).as(title + " fits in 24 columns").isLessThanOrEqualTo(24);
            if (panel.get("type").getAsString().equals("row")) {
                continue;
            }
            assertThat(titles.add(title)).as("panel title " + title + " twice").isTrue();
            assertThat(panel.getAsJsonObject("datasource").get("uid").getAsString()).isEqualTo("${datasource}");
            JsonArray targets = panel.getAsJsonArray("targets");
            assertThat(targets).as(title + " targets").isNotEmpty();
            Set<String> refIds = new HashSet<>();
            for (JsonElement t : targets) {
                assertThat(refIds.add(t.getAsJsonObject().get("refId").getAsString())).as(title + " refId").isTrue();
            }
        }
        List<String> variables = new ArrayList<>();
        dashboard.getAsJsonObject("templating").getAsJsonArray("list").forEach(v -> variables.add(v.getAsJsonObject().get("name").getAsString()));
        assertThat(variables).contains("datasource", "instance");
    }

    /** Each place a metric is read names the agent's job, so NPM's metrics of the same names never mix in. */
    private static void assertSelectorsOnJob(String where, String expr, String job) {
        List<PromQl.Selector> selectors = PromQl.selectors(expr);
        assertThat(selectors).as(where).isNotEmpty();
        for (PromQl.Selector s : selectors) {
            assertThat(s.matchers()).as(where + ": " + s.metric() + " selects job " + job).containsPattern("\\bjob\\s*=\\s*\"" + Pattern.quote(job) + "\"");
        }
    }

    /** A _bucket series is only read as histogram_quantile over a rate, grouped by le. */
    private static void assertHistogramsAreQuantilesOverRates(String where, String expr) {
        if (PromQl.metricNames(expr).stream().noneMatch(m -> m.endsWith("_bucket"))) {
            return;
        }
        assertThat(expr).as(where).contains("histogram_quantile(").containsPattern("rate\\([a-z_]+_bucket\\{");
        Matcher by = BY_LE.matcher(expr);
        boolean le = false;
        while (by.find()) {
            le |= List.of(by.group(1).split("\\s*,\\s*")).stream().map(String::strip).anyMatch("le"::equals);
        }
        assertThat(le).as(where + ": sum by (le, ...) in " + expr).isTrue();
    }

    private static void assertBalancedTemplates(String where, String text) {
        int open = text.split("\\{\\{", -1).length - 1;
        int close = text.split("}}", -1).length - 1;
        assertThat(open).as(where + ": {{ and }} pair up in " + text).isEqualTo(close);
    }

    /** The agent's series, and Prometheus' own per-target ones. */
    private static Set<String> allowedSeries() {
        Set<String> s = new TreeSet<>(ExportedMetrics.seriesNames());
        s.addAll(PROMETHEUS_SERIES);
        return s;
    }

    static List<Map<String, Object>> alerts() {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Map<String, Object> group : list(map(DeployManifests.prometheusRule(), "spec"), "groups")) {
            for (Map<String, Object> rule : list(group, "rules")) {
                if (rule.containsKey("alert")) {
                    out.add(rule);
                }
            }
        }
        assertThat(out).isNotEmpty();
        return out;
    }

    /** Every PromQL query of the dashboard: panel targets and query variables, by where they are. */
    static Map<String, String> dashboardQueries(JsonObject dashboard) {
        Map<String, String> out = new LinkedHashMap<>();
        for (JsonObject panel : panels(dashboard)) {
            JsonArray targets = panel.getAsJsonArray("targets");
            if (targets == null) {
                continue;
            }
            for (JsonElement t : targets) {
                JsonObject target = t.getAsJsonObject();
                out.put("panel \"" + panel.get("title").getAsString() + "\" " + target.get("refId").getAsString(), target.get("expr").getAsString());
            }
        }
        for (JsonElement v : dashboard.getAsJsonObject("templating").getAsJsonArray("list")) {
            JsonObject variable = v.getAsJsonObject();
            if (!variable.get("type").getAsString().equals("query")) {
                continue;
            }
            JsonElement q = variable.get("query");
            String query = q.isJsonObject() ? q.getAsJsonObject().get("query").getAsString() : q.getAsString();
            out.put("variable " + variable.get("name").getAsString(), query);
        }
        return out;
    }

    /** Every panel, those inside rows included. */
    static List<JsonObject> panels(JsonObject dashboard) {
        List<JsonObject> out = new ArrayList<>();
        for (JsonElement p : dashboard.getAsJsonArray("panels")) {
            out.add(p.getAsJsonObject());
            JsonArray inner = p.getAsJsonObject().getAsJsonArray("panels");
            if (inner != null) {
                inner.forEach(i -> out.add(i.getAsJsonObject()));
            }
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Map<String, Object> m, String key) {
        Object v = m.get(key);
        assertThat(v).as(key).isInstanceOf(Map.class);
        return (Map<String, Object>) v;
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> list(Map<String, Object> m, String key) {
        Object v = m.get(key);
        assertThat(v).as(key).isInstanceOf(List.class);
        return (List<Map<String, Object>>) v;
    }
}
