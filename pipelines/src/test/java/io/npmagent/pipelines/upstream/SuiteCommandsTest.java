package io.npmagent.pipelines.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class SuiteCommandsTest {
    private static final String DEFAULT_DENY = "[sig-network] Netpol NetworkPolicy between server and client should support a 'default-deny-ingress' policy [Feature:NetworkPolicy]";
    private static final String NO_SNAT = "[sig-network] NoSNAT Should be able to send traffic between Pods without SNAT";
    private static final String SOURCE_IP = "[sig-network] Services should preserve source pod IP for traffic thru service cluster IP [LinuxOnly]";
    private static final String OTHER_NETPOL = "[sig-network] Netpol NetworkPolicy between server and client should deny ingress access to updated pod [Feature:NetworkPolicy]";
    private static final String SCTP = "[sig-network] Netpol [Feature:SCTPConnectivity] should support a 'default-deny-ingress' policy";

    @Test
    void theFullFormFocusesEveryNetpolSpecAndTheMultiNodeOnesAndSkipsSctp() {
        List<String> argv = SuiteCommands.e2e(Path.of("/b/e2e.test"), Path.of("/k"), Path.of("/o/e2e-bpf.junit.xml"), false);
        assertThat(argv).contains("--kubeconfig=/k", "--provider=skeleton", "--ginkgo.junit-report=/o/e2e-bpf.junit.xml");
        Pattern focus = flag(argv, "--ginkgo.focus=");
        assertThat(List.of(DEFAULT_DENY, NO_SNAT, SOURCE_IP, OTHER_NETPOL)).allMatch(s -> focus.matcher(s).find());
        assertThat(flag(argv, "--ginkgo.skip=").matcher(SCTP).find()).isTrue();
        assertThat(flag(argv, "--ginkgo.skip=").matcher(DEFAULT_DENY).find()).isFalse();
    }

    @Test
    void theShortFormFocusesItsFewSpecsAndBothMultiNodeOnes() {
        Pattern focus = flag(SuiteCommands.e2e(Path.of("e"), Path.of("k"), Path.of("j"), true), "--ginkgo.focus=");
        assertThat(List.of(DEFAULT_DENY, NO_SNAT, SOURCE_IP)).allMatch(s -> focus.matcher(s).find());
        assertThat(focus.matcher(OTHER_NETPOL).find()).isFalse();
    }

    @Test
    void cyclonusExcludesSctpAndTheShortFormIncludesItsTwoTags() {
        assertThat(SuiteCommands.cyclonus(Path.of("/b/cyclonus"), Path.of("/o/j.xml"), false)).contains("--exclude=" + SuiteCommands.CYCLONUS_EXCLUDE,
                "--server-protocol=TCP,UDP", "--job-timeout-seconds=2", "--noisy", "--junit-results-file=/o/j.xml").noneMatch(a -> a.startsWith("--include"));
        assertThat(SuiteCommands.cyclonus(Path.of("c"), Path.of("j"), true)).contains("--include=set-namespace-labels,create-pod");
        assertThat(SuiteCommands.cyclonusSctpCases(Path.of("c"))).contains("--include=sctp", "--dry-run")
                .noneMatch(a -> a.startsWith("--exclude") && a.contains("sctp"));
    }

    @Test
    void aQuotedNameMatchesItselfLiterally() {
        String name = "should allow ingress access from namespace on one named port [Feature:NetworkPolicy] (a|b).*";
        assertThat(Pattern.compile(SuiteCommands.regexQuote(name)).matcher("x " + name).find()).isTrue();
        assertThat(Pattern.compile(SuiteCommands.regexQuote("a.b")).matcher("axb").find()).isFalse();
    }

    private static Pattern flag(List<String> argv, String prefix) {
        return Pattern.compile(argv.stream().filter(a -> a.startsWith(prefix)).findFirst().orElseThrow().substring(prefix.length()));
    }

    @Test
    void cnpRunsTheProfileWithBothExperimentalFeaturesAndTheShortFormSelectsByGoTestRun() {
        List<String> argv = SuiteCommands.cnp(Path.of("/b/cnp-conformance.test"), Path.of("/o/cnp-bpf.report.yaml"), false);
        assertThat(argv).startsWith("/b/cnp-conformance.test", "-test.v").contains("-conformance-profiles=ClusterNetworkPolicy",
                "-supported-features=ClusterNetworkPolicyNamedPorts,ClusterNetworkPolicyEgressNodePeers", "-report-output=/o/cnp-bpf.report.yaml");
        assertThat(argv.get(argv.indexOf("-test.run") + 1)).isEqualTo("^TestConformanceProfiles$");
        List<String> shortForm = SuiteCommands.cnp(Path.of("c"), Path.of("/r.yaml"), true);
        assertThat(shortForm.get(shortForm.indexOf("-test.run") + 1))
                .isEqualTo("^TestConformanceProfiles$/^(CNPAdminTierEgressTCP|CNPBaselineTierIngressUDP|CNPAdminTierPriorityField|CNPAdminTierIntegration)$");
    }
}
