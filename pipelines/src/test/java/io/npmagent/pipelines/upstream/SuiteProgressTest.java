package io.npmagent.pipelines.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class SuiteProgressTest {
    @Test
    void e2eSpecsAreCountedAsTheyEndWithTheirTitles() {
        SuiteProgress p = new SuiteProgress("p");
        assertThat(lines(p, List.of(
                "Will run 3 of 7000 specs",
                "[sig-network] Netpol NetworkPolicy between server and client should support a 'default-deny-ingress' policy [Feature:NetworkPolicy]",
                "STEP: Creating a simple server",
                "• [31.2 seconds]",
                "[sig-network] Netpol NetworkPolicy between server and client should enforce updated policy [Feature:NetworkPolicy]",
                "• [FAILED] [61.0 seconds]",
                "[sig-network] Netpol [SKIPPED] something",
                "[sig-network] NoSNAT Should be able to send traffic between Pods without SNAT",
                "• [12.0 seconds]")))
                .containsExactly("p: 3 specs",
                        "p: 1/3 passed [sig-network] Netpol NetworkPolicy between server and client should support a 'default-deny-ingress' policy [Feature:NetworkPolicy]",
                        "p: 2/3 FAILED [sig-network] Netpol NetworkPolicy between server and client should enforce updated policy [Feature:NetworkPolicy]",
                        "p: 3/3 passed [sig-network] NoSNAT Should be able to send traffic between Pods without SNAT");
    }

    @Test
    void cnpTestsAreNamedAsTheyStartAndCountedWhenGoPrintsTheirResults() {
        SuiteProgress p = new SuiteProgress("p");
        assertThat(lines(p, List.of(
                "=== RUN   TestConformanceProfiles",
                "=== RUN   TestConformanceProfiles/CNPAdminTierEgressTCP",
                "=== RUN   TestConformanceProfiles/CNPAdminTierEgressTCP/Should_support_an_'allow-egress'_policy",
                "=== RUN   TestConformanceProfiles/CNPAdminTierGress",
                "--- FAIL: TestConformanceProfiles (100.00s)",
                "    --- PASS: TestConformanceProfiles/CNPAdminTierEgressTCP (5.01s)",
                "        --- PASS: TestConformanceProfiles/CNPAdminTierEgressTCP/Should_support_an_'allow-egress'_policy (5.01s)",
                "    --- FAIL: TestConformanceProfiles/CNPAdminTierGress (60.50s)")))
                .containsExactly("p: test 1: CNPAdminTierEgressTCP", "p: test 2: CNPAdminTierGress", "p: 1 PASS CNPAdminTierEgressTCP (5.01s)",
                        "p: 2 FAIL CNPAdminTierGress (60.50s)");
    }

    @Test
    void cyclonusCasesAreNamedByTheirDescriptionAndSayWhenAStepNeededASecondTry() {
        SuiteProgress p = new SuiteProgress("p");
        assertThat(lines(p, List.of(
                "testing 2 cases",
                "test #1: set namespace labels",
                "test #2: create pod",
                "starting test case #1",
                "finished policy #1",
                "starting test case #2",
                "running kube probe on try 2",
                "finished policy #2")))
                .containsExactly("p: 2 cases", "p: case 1/2 done: set namespace labels", "p: case 2/2 done: create pod (a step needed a second try)");
    }

    private static List<String> lines(SuiteProgress p, List<String> log) {
        return log.stream().map(p::line).flatMap(Optional::stream).toList();
    }
}
