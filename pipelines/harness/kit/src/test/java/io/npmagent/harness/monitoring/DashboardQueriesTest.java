package io.npmagent.harness.monitoring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A dashboard's queries as Grafana sends them: every target of every panel, rows' panels too, variables filled in or refused. */
class DashboardQueriesTest {
    @TempDir
    Path dir;

    @Test
    void everyTargetOfEveryPanelWithItsVariablesFilledIn() throws Exception {
        Path dashboard = Files.writeString(dir.resolve("d.json"), """
                {"panels": [
                  {"title": "Up", "targets": [{"refId": "A", "expr": "sum(up{instance=~\\"$instance\\"})"}]},
                  {"title": "Row", "type": "row", "panels": [
                    {"title": "Rate", "targets": [{"refId": "B", "expr": "rate(x_total{instance=~\\"${instance}\\"}[$__rate_interval])"},
                                                   {"refId": "C", "datasource": "none"}]}]}
                ]}
                """);
        assertThat(DashboardQueries.of(dashboard, DashboardQueries.ALL_AGENTS)).containsExactly(
                new DashboardQueries.Query("Up", "A", "sum(up{instance=~\".*\"})"),
                new DashboardQueries.Query("Rate", "B", "rate(x_total{instance=~\".*\"}[2m])"));
    }

    @Test
    void aVariableWithoutAValueIsRefusedNamingThePanel() throws Exception {
        Path dashboard = Files.writeString(dir.resolve("d.json"), """
                {"panels": [{"title": "Per node", "targets": [{"refId": "A", "expr": "up{node=\\"$node\\"}"}]}]}
                """);
        assertThatThrownBy(() -> DashboardQueries.of(dashboard, Map.of("instance", ".*")))
                .hasMessageContaining("Per node A").hasMessageContaining("$node");
    }
}
