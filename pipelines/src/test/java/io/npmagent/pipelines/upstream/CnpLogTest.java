package io.npmagent.pipelines.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class CnpLogTest {
    private static final String T = "TestConformanceProfiles";

    /** Go's -test.v output as cnp-conformance.test writes it (testify's blocks tab-indented). */
    private static final List<String> LOG = """
            === RUN   TestConformanceProfiles
                conformance_profile_test.go:104: Running conformance profile tests
            === RUN   TestConformanceProfiles/CNPAdminTierEgressTCP
            === RUN   TestConformanceProfiles/CNPAdminTierEgressTCP/Should_support_an_'allow-egress'_policy_for_TCP_protocol
                helper.go:97: FAILED Command was [/agnhost connect --timeout=3s --protocol=tcp 10.244.1.5:80]
                helper.go:98: Expected connection to succeed from a/b to 10.244.1.5, but instead it miserably failed. stderr: TIMEOUT
            === RUN   TestConformanceProfiles/CNPAdminTierEgressTCP/Should_support_a_'deny-egress'_policy_for_TCP_protocol
                --- PASS: TestConformanceProfiles/CNPAdminTierEgressTCP/Should_support_an_'allow-egress'_policy_for_TCP_protocol (1.20s)
            === RUN   TestConformanceProfiles/CNPAdminTierGress
            === RUN   TestConformanceProfiles/CNPAdminTierGress/Should_support_an_'allow-gress'_policy_across_different_protocols
                helper.go:97: FAILED Command was [/agnhost connect --timeout=3s --protocol=tcp 10.244.1.5:80]
                helper.go:98: Expected connection to succeed from x to y, but instead it miserably failed. stderr: TIMEOUT
                helper.go:97: FAILED Command was [/agnhost connect --timeout=3s --protocol=sctp 10.244.1.5:9003]
                helper.go:98: Expected connection to succeed from x to y, but instead it miserably failed. stderr: REFUSED
                helper.go:73:\s
                    \tError Trace:\t/root/go/pkg/mod/helper.go:73
                    \tError:      \tCondition never satisfied
                    \tTest:       \tTestConformanceProfiles/CNPAdminTierGress/Should_support_an_'allow-gress'_policy_across_different_protocols
            === RUN   TestConformanceProfiles/CNPAdminTierGress/Should_support_a_'deny-gress'_policy
            === RUN   TestConformanceProfiles/CNPAdminTierPortRange
            === RUN   TestConformanceProfiles/CNPAdminTierPortRange/Should_support_a_port_range
                helper.go:97: FAILED Command was [/agnhost connect --timeout=3s --protocol=udp 10.244.2.7:5353]
                helper.go:99: Expected connection to fail from p to q, but instead it successfully connected.
                helper.go:73:\s
                    \tError Trace:\t/root/go/pkg/mod/helper.go:73
                    \tError:      \tCondition never satisfied
                    \tTest:       \tTestConformanceProfiles/CNPAdminTierPortRange/Should_support_a_port_range
            === RUN   TestConformanceProfiles/CNPBaselineTierEgressSCTP
            === RUN   TestConformanceProfiles/CNPBaselineTierEgressSCTP/Should_deny
            === RUN   TestConformanceProfiles/CNPAdminTierEgressNodePeers
                suite.go:190: Skipping CNPAdminTierEgressNodePeers: suite does not support ClusterNetworkPolicyEgressNodePeers
            === RUN   TestConformanceProfiles/CNPAdminTierPriorityField
            --- FAIL: TestConformanceProfiles (200.00s)
                --- PASS: TestConformanceProfiles/CNPAdminTierEgressTCP (5.00s)
                    --- PASS: TestConformanceProfiles/CNPAdminTierEgressTCP/Should_support_an_'allow-egress'_policy_for_TCP_protocol (1.20s)
                    --- PASS: TestConformanceProfiles/CNPAdminTierEgressTCP/Should_support_a_'deny-egress'_policy_for_TCP_protocol (3.80s)
                --- FAIL: TestConformanceProfiles/CNPAdminTierGress (30.00s)
                    --- FAIL: TestConformanceProfiles/CNPAdminTierGress/Should_support_an_'allow-gress'_policy_across_different_protocols (20.00s)
                    --- PASS: TestConformanceProfiles/CNPAdminTierGress/Should_support_a_'deny-gress'_policy (10.00s)
                --- FAIL: TestConformanceProfiles/CNPAdminTierPortRange (11.00s)
                    --- FAIL: TestConformanceProfiles/CNPAdminTierPortRange/Should_support_a_port_range (11.00s)
                --- PASS: TestConformanceProfiles/CNPBaselineTierEgressSCTP (4.00s)
                    --- PASS: TestConformanceProfiles/CNPBaselineTierEgressSCTP/Should_deny (4.00s)
                --- SKIP: TestConformanceProfiles/CNPAdminTierEgressNodePeers (0.00s)
            FAIL
            """.lines().toList();

    private static final Set<String> SCTP = Set.of("CNPAdminTierGress", "CNPBaselineTierEgressSCTP", "CNPAdminTierEgressNodePeers", "CNPAdminTierPortRange");

    @Test
    void aFailureIsTheLastProbeLoggedBeforeItsErrorBlockInItsSubtest() {
        var tests = CnpLog.parse(LOG);
        assertThat(tests.keySet()).containsExactly(T + "/CNPAdminTierEgressTCP", T + "/CNPAdminTierGress", T + "/CNPAdminTierPortRange",
                T + "/CNPBaselineTierEgressSCTP", T + "/CNPAdminTierEgressNodePeers", T + "/CNPAdminTierPriorityField");
        assertThat(tests.get(T + "/CNPAdminTierEgressTCP").failures()).isEmpty(); // a try that failed, then passed
        List<CnpLog.Failure> gress = tests.get(T + "/CNPAdminTierGress").failures();
        assertThat(gress).hasSize(1);
        assertThat(gress.get(0).protocol()).isEqualTo("sctp");
        assertThat(gress.get(0).probe()).isEqualTo("/agnhost connect --timeout=3s --protocol=sctp 10.244.1.5:9003");
        assertThat(tests.get(T + "/CNPAdminTierPortRange").failures().get(0).describe())
                .isEqualTo("CNPAdminTierPortRange/Should_support_a_port_range: /agnhost connect --timeout=3s --protocol=udp 10.244.2.7:5353:"
                        + " Expected connection to fail from p to q, but instead it successfully connected. (Condition never satisfied)");
        assertThat(tests.get(T + "/CNPAdminTierPriorityField").result()).isNull();
    }

    @Test
    void sctpFailuresAndSctpTestsThatPassAreNotRunOtherFailuresFailAndAnUnfinishedTestFails() {
        SuiteRun run = CnpLog.run("bpf", 200, LOG, SCTP);
        assertThat(run.suite()).isEqualTo("cnp");
        assertThat(run.passed()).isEqualTo(1); // CNPAdminTierEgressTCP
        assertThat(run.failures()).extracting(SuiteRun.Outcome::name).containsExactly("CNPAdminTierPortRange", "CNPAdminTierPriorityField");
        assertThat(run.failures().get(0).reason()).contains("--protocol=udp", "[subtests: 1 fail]");
        assertThat(run.failures().get(1).reason()).startsWith("no result");
        assertThat(run.skips()).extracting(SuiteRun.Outcome::name).containsExactly("CNPAdminTierGress", "CNPBaselineTierEgressSCTP",
                "CNPAdminTierEgressNodePeers");
        assertThat(run.skips().get(0).reason()).startsWith(CnpLog.SCTP_REASON).contains("every failure an SCTP probe (1,", "1 fail, 1 pass");
        assertThat(run.skips().get(1).reason()).contains("passed, but its SCTP probes all expect a drop");
        assertThat(run.skips().get(2).reason()).isEqualTo("skipped by the suite: Skipping CNPAdminTierEgressNodePeers: suite does not support"
                + " ClusterNetworkPolicyEgressNodePeers");
    }

    @Test
    void aRunWithoutAnyTestIsAFailure() {
        SuiteRun run = CnpLog.run("nft", 300, List.of("=== RUN   TestConformanceProfiles", "--- FAIL: TestConformanceProfiles (300.00s)"), SCTP);
        assertThat(run.failed()).isEqualTo(1);
        assertThat(run.passed()).isZero();
    }

    @Test
    void theTestsThatProbeSctpAreReadPerTestFromTheSource() {
        String file = """
                var CNPAdminTierEgressNamedPort = suite.ConformanceTest{
                	ShortName:   "CNPAdminTierEgressNamedPort",
                	Test: func(t *testing.T, s *suite.ConformanceTestSuite) {
                		kubernetes.PokeServer(t, s.ClientSet, &s.KubeConfig, "ns", "pod", "tcp", ip, int32(80), s.TimeoutConfig, true)
                	},
                }

                var CNPAdminTierEgressNodePeers = suite.ConformanceTest{
                	ShortName:   "CNPAdminTierEgressNodePeers",
                	Test: func(t *testing.T, s *suite.ConformanceTestSuite) {
                		kubernetes.PokeServer(t, s.ClientSet, &s.KubeConfig, "ns", "pod", "sctp",
                			ip, int32(s.HostNetworkPorts[6]), s.TimeoutConfig, false)
                	},
                }
                """;
        assertThat(CnpLog.sctpTests(List.of(file, "package tests\\n"))).containsExactly("CNPAdminTierEgressNodePeers");
    }
}
