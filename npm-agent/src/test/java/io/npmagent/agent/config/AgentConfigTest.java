package io.npmagent.agent.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class AgentConfigTest {

    /** Azure NPM's own ConfigMap content, as it ships. */
    private static final String NPM = """
            {
                "ResyncPeriodInMinutes": 15,
                "ListeningPort": 10091,
                "ListeningAddress": "0.0.0.0",
                "Toggles": {
                    "EnablePrometheusMetrics": true,
                    "EnablePprof": true,
                    "EnableHTTPDebugAPI": true,
                    "EnableV2NPM": true,
                    "PlaceAzureChainFirst": true,
                    "ApplyIPSetsOnNeedV2": false,
                    "NetPolInBackground": true
                },
                "MaxBatchedACLsPerPod": 30,
                "MaxPendingNetPols": 100,
                "NetPolInvervalInMilliseconds": 500,
                "LogLevel": "info"
            }
            """;

    @Test
    void npmsOwnConfigMapLoadsAndItsUnusedKeysAreReported() throws Exception {
        AgentConfig.Loaded loaded = AgentConfig.parse(NPM);
        AgentConfig c = loaded.config();
        assertThat(c.queue().background()).isTrue();
        assertThat(c.queue().maxPendingNetPols()).isEqualTo(100);
        assertThat(c.queue().interval()).isEqualTo(Duration.ofMillis(500));
        assertThat(c.toggles()).containsEntry("EnablePprof", true).containsEntry("ApplyIPSetsOnNeedV2", false)
                .doesNotContainKey("NetPolInBackground");
        assertThat(loaded.ignored()).containsExactly("MaxBatchedACLsPerPod (an NPM key this agent does not use)");
    }

    @Test
    void aMissingKeyKeepsItsDefaultAndYamlWorksToo() throws Exception {
        AgentConfig c = AgentConfig.parse("""
                NetPolIntervalInMilliseconds: 250
                Backend: iptables-nft
                EdtHorizonInMilliseconds: 500
                ReconcilePeriodInSeconds: 30
                BigTcp: true
                CgroupRoot: /host/sys/fs/cgroup
                """).config();
        assertThat(c.queue().interval()).isEqualTo(Duration.ofMillis(250));
        assertThat(c.queue().maxPendingNetPols()).isEqualTo(AgentConfig.DEFAULTS.queue().maxPendingNetPols());
        assertThat(c.backend()).isEqualTo("iptables-nft");
        assertThat(c.bandwidth().horizon()).isEqualTo(Duration.ofMillis(500));
        assertThat(c.bandwidth().ingressBurst()).isEqualTo(AgentConfig.DEFAULTS.bandwidth().ingressBurst());
        assertThat(c.reconcilePeriod()).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.bandwidth().bigTcp()).isTrue();
        assertThat(AgentConfig.DEFAULTS.bandwidth().bigTcp()).as("opt-in").isFalse();
        assertThat(c.bpffs()).isEqualTo(Path.of("/sys/fs/bpf"));
        assertThat(c.cgroupRoot()).isEqualTo(Path.of("/host/sys/fs/cgroup"));
        assertThat(AgentConfig.DEFAULTS.cgroupRoot()).as("none unless given").isNull();
        assertThat(AgentConfig.parse("CgroupRoot: ''").config().cgroupRoot()).as("\"\": none").isNull();
        assertThat(AgentConfig.parse("").config()).isEqualTo(AgentConfig.DEFAULTS);
    }

    @Test
    void everyBadValueIsNamedWithItsKeyAndReason() {
        assertThatThrownBy(() -> AgentConfig.parse("""
                {"ListeningPort": "abc", "LogLevel": "loud", "Backend": "ebpf", "MaxPendingNetPols": 0,
                 "Toggles": {"NetPolInBackground": "yes"}, "BpffsPath": "relative/dir", "ResyncPeriodInMinutes": 1.5,
                 "BigTcp": "on", "CgroupRoot": "sys/fs/cgroup"}
                """))
                .isInstanceOfSatisfying(AgentConfig.Rejected.class, e -> assertThat(e.problems()).satisfiesExactlyInAnyOrder(
                        p -> assertThat(p).startsWith("ListeningPort: expected a number").contains("\"abc\""),
                        p -> assertThat(p).startsWith("LogLevel: one of debug, info, warning, error").contains("\"loud\""),
                        p -> assertThat(p).startsWith("Backend: one of auto, bpf").contains("\"ebpf\""),
                        p -> assertThat(p).startsWith("Toggles.NetPolInBackground: expected true or false"),
                        p -> assertThat(p).startsWith("BpffsPath: an absolute path"),
                        p -> assertThat(p).startsWith("ResyncPeriodInMinutes: a whole number"),
                        p -> assertThat(p).startsWith("BigTcp: expected true or false").contains("\"on\""),
                        p -> assertThat(p).startsWith("CgroupRoot: an absolute path").contains("\"sys/fs/cgroup\""),
                        p -> assertThat(p).startsWith("MaxPendingNetPols")));
    }

    @Test
    void contradictionsAreRejected() {
        assertThatThrownBy(() -> AgentConfig.parse("{\"NetPolInBackground\": true, \"Toggles\": {\"NetPolInBackground\": false}}"))
                .hasMessageContaining("NetPolInBackground: set both at the top and under Toggles");
        assertThatThrownBy(() -> AgentConfig.parse("{\"NetPolIntervalInMilliseconds\": 100, \"NetPolInvervalInMilliseconds\": 200}"))
                .hasMessageContaining("disagree");
        assertThatThrownBy(() -> AgentConfig.parse("{\"EdtHorizonInMilliseconds\": 10, \"EcnThresholdInMilliseconds\": 50}"))
                .hasMessageContaining("ECN threshold");
        assertThatThrownBy(() -> AgentConfig.parse("[1, 2]")).hasMessageContaining("an object of settings, not a list");
        assertThatThrownBy(() -> AgentConfig.parse("{\"a\": 1, \"a\": 2}")).isInstanceOf(AgentConfig.Rejected.class);
    }

    @Test
    void flowsHaveTheirDefaultsAndEachKeyCanBeSet() throws Exception {
        assertThat(AgentConfig.DEFAULTS.flows()).isEqualTo(new FlowConfig(true, false, 1000, 5, 15, 10_000, false));
        assertThat(AgentConfig.DEFAULTS.flows().settings()).isEqualTo(io.npmagent.dataplane.flow.FlowSettings.DEFAULT);
        AgentConfig.Loaded loaded = AgentConfig.parse("""
                Flows:
                  Denied: false
                  Allowed: true
                  RatePerSecond: 50
                  IntervalSeconds: 2
                  RetentionMinutes: 60
                  MaxFlows: 500
                  Events: true
                  Colour: blue
                """);
        FlowConfig f = loaded.config().flows();
        assertThat(f).isEqualTo(new FlowConfig(false, true, 50, 2, 60, 500, true));
        assertThat(f.settings().interval()).isEqualTo(Duration.ofSeconds(2));
        assertThat(f.retention()).isEqualTo(Duration.ofMinutes(60));
        assertThat(loaded.ignored()).singleElement().asString().startsWith("Flows.Colour (unknown");
        assertThat(AgentConfig.parse("Flows: {Allowed: true}").config().flows())
                .as("a key left out keeps its default").isEqualTo(new FlowConfig(true, true, 1000, 5, 15, 10_000, false));
    }

    @Test
    void aBadFlowsValueIsNamedWithItsKey() {
        assertThatThrownBy(() -> AgentConfig.parse("""
                {"Flows": {"Denied": "yes", "RatePerSecond": 0, "IntervalSeconds": 1.5, "RetentionMinutes": "15", "MaxFlows": -1, "Events": 1}}
                """))
                .isInstanceOfSatisfying(AgentConfig.Rejected.class, e -> assertThat(e.problems()).satisfiesExactlyInAnyOrder(
                        p -> assertThat(p).startsWith("Flows.Denied: expected true or false").contains("\"yes\""),
                        p -> assertThat(p).startsWith("Flows.RatePerSecond: a whole number from 1"),
                        p -> assertThat(p).startsWith("Flows.IntervalSeconds: a whole number from 1"),
                        p -> assertThat(p).startsWith("Flows.RetentionMinutes: expected a number"),
                        p -> assertThat(p).startsWith("Flows.MaxFlows: a whole number from 1"),
                        p -> assertThat(p).startsWith("Flows.Events: expected true or false")));
        assertThatThrownBy(() -> AgentConfig.parse("Flows: [1]")).hasMessageContaining("Flows: expected an object");
    }

    @Test
    void whatTheKernelReportsAndEventsApplyWithoutARestartTheLogsSizeDoesNot() throws Exception {
        AgentConfig before = AgentConfig.DEFAULTS;
        for (String key : java.util.List.of("Denied: false", "Allowed: true", "RatePerSecond: 7", "IntervalSeconds: 7", "Events: true")) {
            ConfigReload reload = ConfigReload.between(before, AgentConfig.parse("Flows: {" + key + "}").config());
            assertThat(reload.applied()).as(key).containsExactly("Flows." + key.substring(0, key.indexOf(':')));
            assertThat(reload.restartNeeded()).as(key).isEmpty();
        }
        for (String key : java.util.List.of("RetentionMinutes: 7", "MaxFlows: 7")) {
            ConfigReload reload = ConfigReload.between(before, AgentConfig.parse("Flows: {" + key + "}").config());
            assertThat(reload.applied()).as(key).isEmpty();
            assertThat(reload.restartNeeded()).as(key).containsExactly("Flows." + key.substring(0, key.indexOf(':')));
        }
        AgentConfig changed = AgentConfig.parse("Flows: {Denied: false, RatePerSecond: 7, Events: true, MaxFlows: 7}").config();
        AgentConfig inForce = before.withRunTimeKeysOf(changed);
        assertThat(inForce.flows().events()).as("taken live").isTrue();
        assertThat(inForce.flows().settings()).as("taken live").isEqualTo(new io.npmagent.dataplane.flow.FlowSettings(false, false, 7,
                java.time.Duration.ofSeconds(5)));
        assertThat(inForce.flows().maxFlows()).as("kept until a restart").isEqualTo(10_000);
    }
}
