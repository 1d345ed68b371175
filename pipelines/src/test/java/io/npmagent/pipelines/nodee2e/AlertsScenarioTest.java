package io.npmagent.pipelines.nodee2e;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The alerts scenario's pieces that need no cluster: finding a policy's chain, the fault table, the wrapper. */
class AlertsScenarioTest {
    /** As iptables-nft-save printed it for policy default/refused on a node (the agent's comment, then the jump). */
    private static final String SAVE = """
            -A NPM-I-5INXZVAV4M4D7COX -m comment --comment "npm:gna5rbyojsi5glhm start" -j MARK --set-xmark 0x0/0x20000
            -A NPM-I-5INXZVAV4M4D7COX -m comment --comment "npm:ymw5vkzlpmeffrix policy default/refused" -j NPM-PI-ZBP6DPU3RNWYRSFG
            -A NPM-I-5INXZVAV4M4D7COX -m comment --comment "npm:xymw5vkzlpmeffri policy default/refused-too" -j NPM-PI-AAAAAAAAAAAAAAAA
            """;

    @Test
    void thePolicysChainIsWhatItsCommentedRuleJumpsTo() {
        assertThat(AlertsScenario.policyChain(SAVE, "default/refused")).isEqualTo("NPM-PI-ZBP6DPU3RNWYRSFG");
        assertThat(AlertsScenario.policyChain(SAVE, "default/refused-too")).isEqualTo("NPM-PI-AAAAAAAAAAAAAAAA");
        assertThat(AlertsScenario.policyChain(SAVE, "default/other")).isNull();
    }

    @Test
    void theFaultTableRejectsOnlyPrometheusAtTheMetricsPort() {
        assertThat(AlertsScenario.rejectPrometheus("10.250.0.10")).contains("hook input", "ip saddr 10.250.0.10 tcp dport 10091 reject with tcp reset");
    }

    @Test
    void theWrapperDelaysRestoresAndRunsTheRealBinaryUnderItsName() {
        assertThat(AlertsScenario.slowWrapper()).startsWith("#!/bin/bash\n").contains("*-restore) sleep 6", "exec -a \"$0\" /tmp/xtables-nft-multi.real \"$@\"");
    }
}
