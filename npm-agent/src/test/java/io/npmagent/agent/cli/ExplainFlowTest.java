package io.npmagent.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code explain --flow}: a flow the kernel recorded, replayed against the shop example's policies. */
class ExplainFlowTest {
    private static final String SHOP = CompileCommandTest.SHOP;

    @TempDir
    Path dir;

    /** A flow line as {@code npm-agent flows --output json} prints it, frontend to db on 5432 unless changed. */
    private static String flow(String verdict, String reason, String attribution, String destination, int port) {
        return "{\"first\":\"2026-12-07T01:18:46Z\",\"last\":\"2026-12-07T01:18:47Z\",\"node\":\"npmsb-fl\",\"backend\":\"bpf\","
                + "\"verdict\":\"" + verdict + "\",\"reason\":" + reason + ",\"direction\":\"ingress\",\"reporter\":\"tc\",\"family\":\"IPv4\","
                + "\"protocol\":\"TCP\",\"source\":{\"address\":\"10.244.1.10\",\"pod\":\"shop/frontend\"},\"destination\":" + destination
                + ",\"port\":" + port + ",\"service\":null,\"packets\":2,\"bytes\":134,\"reports\":1,\"attribution\":" + attribution
                + ",\"nearest\":null}";
    }

    private static final String DB = "{\"address\":\"10.244.2.20\",\"pod\":\"data/db\"}";
    private static final String PROMETHEUS = "{\"address\":\"10.244.3.30\",\"pod\":\"monitoring/prometheus\"}";
    private static final String ISOLATED = "{\"kind\":\"NetworkPolicy\",\"tier\":\"NetworkPolicy\",\"policies\":["
            + "{\"namespace\":\"data\",\"name\":\"db-from-api\",\"rule\":\"isolation\"},"
            + "{\"namespace\":\"data\",\"name\":\"default-deny-ingress\",\"rule\":\"isolation\"}],"
            + "\"text\":\"NetworkPolicy data/db-from-api, data/default-deny-ingress isolate it for ingress, no rule admits it\"}";

    private CliRun replay(String line) throws IOException {
        Path file = dir.resolve("flow.json");
        Files.writeString(file, line + "\n");
        return CliRun.of("explain", "--manifests", SHOP, "--flow", file.toString());
    }

    @Test
    void aDefaultDenyTheKernelReportedAgreesWithTheIsolatingPolicies() throws IOException {
        CliRun run = replay(flow("denied", "\"policy\"", ISOLATED, DB, 5432));
        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out()).contains("kernel (node npmsb-fl, bpf): DENIED ingress by NetworkPolicy data/db-from-api, data/default-deny-ingress")
                .contains("intent: DENIED ingress by NetworkPolicy data/db-from-api, data/default-deny-ingress").endsWith("AGREE\n");
    }

    @Test
    void aClusterPolicyDenyAgreesWhenTheSameRuleDecides() throws IOException {
        String byBaseline = "{\"kind\":\"ClusterNetworkPolicy\",\"tier\":\"Baseline\",\"policies\":[{\"namespace\":\"\","
                + "\"name\":\"monitoring-apart-by-default\",\"rule\":\"1\"}],"
                + "\"text\":\"Baseline cnp/monitoring-apart-by-default ingress[1] \\\"from-elsewhere\\\" Deny\"}";
        CliRun run = replay(flow("denied", "\"policy\"", byBaseline, PROMETHEUS, 9090));
        assertThat(run.exitCode()).as(run.out()).isZero();
        assertThat(run.out()).endsWith("AGREE\n");
    }

    @Test
    void aVerdictThePoliciesDoNotGiveIsADisagreement() throws IOException {
        CliRun run = replay(flow("allowed", "null", "null", DB, 5432));
        assertThat(run.exitCode()).isEqualTo(ExitCodes.DISAGREE);
        assertThat(run.out()).contains("DISAGREE: the kernel allowed what the policies deny");
    }

    @Test
    void theSameVerdictByOtherPoliciesIsADisagreementOnWhatDecided() throws IOException {
        String onlyOne = "{\"kind\":\"NetworkPolicy\",\"tier\":\"NetworkPolicy\",\"policies\":["
                + "{\"namespace\":\"data\",\"name\":\"default-deny-ingress\",\"rule\":\"isolation\"}],"
                + "\"text\":\"NetworkPolicy data/default-deny-ingress isolates it for ingress, no rule admits it\"}";
        CliRun run = replay(flow("denied", "\"policy\"", onlyOne, DB, 5432));
        assertThat(run.exitCode()).isEqualTo(ExitCodes.DISAGREE);
        assertThat(run.out()).contains("DISAGREE on what decided").contains("[data/db-from-api, data/default-deny-ingress]");
    }

    @Test
    void aFlowThatCannotBeReplayedNamesTheField() throws IOException {
        CliRun run = replay(flow("denied", "\"policy\"", ISOLATED, DB, 5432).replace("\"port\":5432,", ""));
        assertThat(run.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err()).contains("port");
        assertThat(CliRun.of("explain", "--manifests", SHOP, "--flow", "x.json", "--port", "80").err()).contains("without --from, --to and --port");
        assertThat(replay("not json").err()).contains("not JSON");
    }
}
