package io.npmagent.pipelines.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class UpstreamSuitesReportTest {
    @TempDir
    Path dir;

    /** The shape of e2e.test's --ginkgo.junit-report: every spec of the binary, the unfocused ones as bare "skipped". */
    private static final String E2E = """
            <?xml version="1.0" encoding="UTF-8"?>
            <testsuites tests="7144" disabled="7139" errors="0" failures="1" time="99.1">
              <testsuite name="Kubernetes e2e suite" package="/" tests="7144" disabled="0" skipped="7139" errors="0" failures="1" time="99.1">
                <testcase name="[SynchronizedBeforeSuite]" classname="Kubernetes e2e suite" status="passed" time="0.1"></testcase>
                <testcase name="[It] [sig-network] Netpol NetworkPolicy between server and client should support a 'default-deny-ingress' policy [Feature:NetworkPolicy] [sig-network, Feature:NetworkPolicy]" classname="Kubernetes e2e suite" status="passed" time="30.0"></testcase>
                <testcase name="[It] [sig-network] Netpol NetworkPolicy between server and client should enforce updated policy [Feature:NetworkPolicy] [sig-network, Feature:NetworkPolicy]" classname="Kubernetes e2e suite" status="failed" time="40.0">
                  <failure message="Had 2 wrong results in reachability matrix" type="failed">[FAILED] Had 2 wrong results in reachability matrix
            In [It] at: k8s.io/kubernetes@v1.34.4/test/e2e/network/netpol/test_helper.go:129</failure>
                </testcase>
                <testcase name="[It] [sig-network] Netpol API should support creating NetworkPolicy API operations [sig-network]" classname="Kubernetes e2e suite" status="passed" time="1.0"></testcase>
                <testcase name="[It] [sig-network] Netpol [Feature:SCTPConnectivity] [LinuxOnly] NetworkPolicy between server and client using SCTP should enforce policy based on Ports [Feature:NetworkPolicy] [sig-network, Feature:SCTPConnectivity, Feature:NetworkPolicy]" classname="Kubernetes e2e suite" status="skipped" time="0">
                  <skipped message="skipped"></skipped>
                </testcase>
                <testcase name="[It] [sig-network] Netpol NetworkPolicy between server and client should allow egress access on one named port [Feature:NetworkPolicy] [sig-network, Feature:NetworkPolicy]" classname="Kubernetes e2e suite" status="skipped" time="0">
                  <skipped message="skipped"></skipped>
                </testcase>
                <testcase name="[It] [sig-network] Netpol NetworkPolicy between server and client should skip itself [Feature:NetworkPolicy]" classname="Kubernetes e2e suite" status="skipped" time="0">
                  <skipped message="skipped - Only supported for providers [gce] (not skeleton)"></skipped>
                </testcase>
                <testcase name="[It] [sig-storage] CSI mock volume should work" classname="Kubernetes e2e suite" status="skipped" time="0">
                  <skipped message="skipped"></skipped>
                </testcase>
                <testcase name="[It] [sig-apps] Deployment should roll" classname="Kubernetes e2e suite" status="passed" time="3"></testcase>
              </testsuite>
            </testsuites>
            """;

    @Test
    void e2eCountsOnlyNetpolSpecsAndNamesEverySkipWithItsReason() throws IOException {
        Files.writeString(dir.resolve("e2e-bpf.junit.xml"), E2E);
        Files.writeString(dir.resolve("e2e-bpf.seconds"), "99\n");

        SuiteRun run = UpstreamSuitesMain.read(dir, "e2e", "bpf");

        assertThat(run.passed()).as("default-deny-ingress and the API spec; not the Deployment spec outside the focus").isEqualTo(2);
        assertThat(run.failed()).isEqualTo(1);
        assertThat(run.failures().get(0).name()).startsWith("[sig-network] Netpol NetworkPolicy between server and client should enforce updated");
        assertThat(run.failures().get(0).reason()).contains("Had 2 wrong results in reachability matrix");
        assertThat(run.skips()).extracting(SuiteRun.Outcome::reason).containsExactly(
                "[Feature:SCTPConnectivity]: this kernel has no SCTP sockets", "skipped - Only supported for providers [gce] (not skeleton)");
        assertThat(run.skipped()).as("the unselected named-port spec (a short run) is not a skip").isEqualTo(2);
        assertThat(run.seconds()).isEqualTo(99);
    }

    @Test
    void aFailedSuiteSetupIsAFailureThoughItIsNoNetpolSpec() throws IOException {
        Files.writeString(dir.resolve("e2e-nft.junit.xml"), E2E.replace(
                "<testcase name=\"[SynchronizedBeforeSuite]\" classname=\"Kubernetes e2e suite\" status=\"passed\" time=\"0.1\"></testcase>",
                "<testcase name=\"[SynchronizedBeforeSuite]\" status=\"failed\"><failure message=\"nodes not schedulable\">x</failure></testcase>"));

        assertThat(UpstreamSuitesMain.read(dir, "e2e", "nft").failures()).extracting(SuiteRun.Outcome::name)
                .contains("[SynchronizedBeforeSuite]");
    }

    @Test
    void aRunWithNoReportIsAFailureNamingItsLog() throws IOException {
        Files.writeString(dir.resolve("cyclonus-nft.log"), "line 1\npanic: unable to create pods\n");

        SuiteRun run = UpstreamSuitesMain.read(dir, "cyclonus", "nft");

        assertThat(run.failed()).isEqualTo(1);
        assertThat(run.failures().get(0).reason()).contains("no JUnit report", "cyclonus-nft.log", "panic: unable to create pods");
    }

    @Test
    void cyclonusFailuresTakeTheirWrongStepsFromTheLogRetriedStepsAreNamedAndSctpCasesAreNamedSkips() throws IOException {
        Files.writeString(dir.resolve("cyclonus-bpf.junit.xml"), """
                <testsuite tests="2" failures="1" time="" name="cyclonus">
                    <properties></properties>
                    <testcase classname="" name="deny all ingress" time=""></testcase>
                    <testcase classname="" name="allow ingress on port 81" time="">
                        <failure message="" type=""></failure>
                    </testcase>
                </testsuite>
                """);
        Files.writeString(dir.resolve("cyclonus-bpf.log"), String.join("\n", List.of(
                "starting test case #1",
                "evaluating test case: deny all ingress",
                "step 1 on all available ports/protocols:",
                "0 wrong, 0 ignored, 324 correct",
                "kube results, try 0:",
                "kube results, try 1:",
                "Actual vs expected (last round):",
                "finished policy #1",
                "starting test case #2",
                "evaluating test case: allow ingress on port 81",
                "step 1 on port 81, protocol TCP:",
                "Discrepancy found:3 wrong, 0 ignored, 78 correct",
                "kube results, try 0:",
                "step 2 on all available ports/protocols:",
                "0 wrong, 0 ignored, 324 correct",
                "kube results, try 0:",
                "finished policy #2")));
        Files.writeString(dir.resolve("cyclonus-bpf.excluded"), "test #1: ingress on SCTP port 80\ntest #2: egress on SCTP port 81\n");

        SuiteRun run = UpstreamSuitesMain.read(dir, "cyclonus", "bpf");

        assertThat(run.passed()).isEqualTo(1);
        assertThat(run.failures()).singleElement().satisfies(f -> {
            assertThat(f.name()).isEqualTo("allow ingress on port 81");
            assertThat(f.reason()).startsWith("step 1 (port 81, protocol TCP): 3 wrong, 78 correct (which ones: ").doesNotContain("step 2");
        });
        assertThat(run.skips()).extracting(SuiteRun.Outcome::name).containsExactly("ingress on SCTP port 80", "egress on SCTP port 81");
        assertThat(run.skipped()).isEqualTo(2);
        assertThat(run.retried()).singleElement().satisfies(r -> {
            assertThat(r.name()).isEqualTo("deny all ingress");
            assertThat(r.reason()).startsWith("first try wrong somewhere, probed again: step 1 (all available ports/protocols): try 2 (its tables: ");
        });
    }

    @Test
    void theDocumentAndTableCarryEveryRunAndTheExitSaysWhetherAnyFailed() throws Exception {
        Files.writeString(dir.resolve("e2e-bpf.junit.xml"), E2E);
        Path json = dir.resolve("out.json");

        int exit = new picocli.CommandLine(new UpstreamSuitesMain()).execute("--json", json.toString(), "--dir", dir.toString(),
                "--run", "e2e:bpf", "--run", "cyclonus:bpf", "--seconds", "12");

        assertThat(exit).isEqualTo(1);
        String doc = Files.readString(json);
        assertThat(doc).contains("\"suite\": \"e2e\"", "\"suite\": \"cyclonus\"", "\"backend\": \"bpf\"", "\"passed\": 2", "\"failures\"",
                "\"skips\"", "\"seconds\": 12");
    }
}
