package io.npmagent.pipelines.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A cyclonus log in the shape of a real --noisy run's, held against conntrack event lines as the node logs them. */
class KernelCheckTest {
    @TempDir
    Path dir;

    private static final Map<String, String> ADDRESS = Map.of("x/a", "10.244.0.3", "z/b", "10.244.0.9");
    private static final Instant TRY1 = Instant.parse("2026-12-02T05:41:48Z");
    private static final Instant TRY2 = Instant.parse("2026-12-02T05:42:10Z");
    private static final Instant NEXT_CASE = Instant.parse("2026-12-02T05:42:40Z");

    /** Rows x/a and z/b, columns X/A and Z/B, each cell TCP/80 then TCP/81. */
    private static String table(String xa, String zb) {
        return String.join("\n",
                "+--------+---------+---------+",
                "| TCP/80 |   X/A   |   Z/B   |",
                "| TCP/81 |         |         |",
                "+--------+---------+---------+",
                "| x/a    | " + xa.substring(0, 3) + "     | " + xa.substring(4) + "     |",
                "+--------+---------+---------+",
                "| z/b    | " + zb.substring(0, 3) + "     | " + zb.substring(4) + "     |",
                "+--------+---------+---------+",
                "");
    }

    /** z/b may not reach x/a on 81; the first try saw it connect, the second did not. */
    private static final String LOG = String.join("\n",
            "resources:",
            "+-----------+-----------+-----+------------+------------------------+-------------------+",
            "| NAMESPACE | NS LABELS | POD | POD LABELS |          IPS           | CONTAINERS/PORTS  |",
            "+-----------+-----------+-----+------------+------------------------+-------------------+",
            "| x         | ns: x     | a   | pod: a     | pod: 10.244.0.3        | cont-80-tcp, port |",
            "|           |           |     |            | service: 10.96.130.5   | serve-80-tcp: 80  |",
            "+-----------+-----------+-----+------------+------------------------+-------------------+",
            "| z         | ns: z     | b   | pod: b     | pod: 10.244.0.9        | cont-80-tcp, port |",
            "+-----------+-----------+-----+------------+------------------------+-------------------+",
            "a row of another table, shaped alike, with no address in that column:",
            "| y         | ns: y     | c   | pod: c     | pod: a                 | cont-80-tcp, port |",
            "starting test case #1",
            "time=\"2026-12-02T05:41:40Z\" level=info msg=\"cluster state reset\"",
            "time=\"2026-12-02T05:41:43Z\" level=info msg=\"step 1: waiting 5 seconds for perturbation to take effect\"",
            "time=\"2026-12-02T05:41:48Z\" level=info msg=\"running probe &{AllAvailable:true PortProtocol:<nil> Mode:service-name}\"",
            "time=\"2026-12-02T05:41:48Z\" level=info msg=\"running kube probe on try 1\"",
            "time=\"2026-12-02T05:42:10Z\" level=info msg=\"running kube probe on try 2\"",
            "evaluating test case: deny z to x/a on 81",
            "step 1 on all available ports/protocols:",
            "0 wrong, 0 ignored, 8 correct",
            "Expected combined:",
            table(". .|. .", ". X|. ."),
            "kube results, try 0:",
            table(". .|. .", ". .|. ."),
            "kube results, try 1:",
            table(". .|. .", ". X|. ."),
            "Actual vs expected (last round):",
            "finished policy #1",
            "starting test case #2",
            "time=\"2026-12-02T05:42:40Z\" level=info msg=\"cluster state reset\"");

    private static String reply(Instant at, String from, String to, int port, String state) {
        return "[" + at.getEpochSecond() + ".250000]\t [UPDATE] tcp      6 60 " + state + " src=" + ADDRESS.get(from)
                + " dst=10.96.0.99 sport=40000 dport=" + port + " src=" + ADDRESS.get(to) + " dst=" + ADDRESS.get(from) + " sport=" + port
                + " dport=40000";
    }

    /** A reply for every connection cyclonus expected, in both tries, plus EXTRA. */
    private static List<String> capture(String... extra) {
        List<String> lines = new ArrayList<>();
        lines.add("[" + (TRY1.getEpochSecond() - 60) + ".000000]\t [UPDATE] udp      17 30 src=10.244.0.3 dst=10.96.0.10 sport=5 dport=53 "
                + "src=10.244.0.2 dst=10.244.0.3 sport=53 dport=5");
        for (Instant at : List.of(TRY1.plusSeconds(3), TRY2.plusSeconds(3))) {
            for (String from : List.of("x/a", "z/b")) {
                for (String to : List.of("x/a", "z/b")) {
                    for (int port : List.of(80, 81)) {
                        if (!(from.equals("z/b") && to.equals("x/a") && port == 81)) {
                            lines.add(reply(at, from, to, port, "SYN_RECV"));
                        }
                    }
                }
            }
        }
        lines.addAll(List.of(extra));
        return lines;
    }

    private static KernelCheck check(List<String> capture) {
        return KernelCheck.of(CyclonusRounds.parse(List.of(LOG.split("\n"))), capture == null ? null : ConntrackReplies.parse(capture));
    }

    @Test
    void roundsCarryTheirTriesTimesTablesAndThePodsAddresses() {
        CyclonusRounds rounds = CyclonusRounds.parse(List.of(LOG.split("\n")));

        assertThat(rounds.addresses()).isEqualTo(ADDRESS);
        assertThat(rounds.rounds()).hasSize(2);
        CyclonusRounds.Round first = rounds.rounds().get(0);
        assertThat(first.start()).isEqualTo(TRY1);
        assertThat(first.end()).isEqualTo(TRY2);
        assertThat(rounds.rounds().get(1).end()).isEqualTo(NEXT_CASE);
        assertThat(first.got()).hasSize(8).containsEntry(new CyclonusRounds.Cell("z/b", "x/a", "TCP/81"), '.');
        assertThat(first.expected()).containsEntry(new CyclonusRounds.Cell("z/b", "x/a", "TCP/81"), 'X')
                .containsEntry(new CyclonusRounds.Cell("z/b", "x/a", "TCP/80"), '.');
    }

    @Test
    void aProbeThatConnectedWithNoReplyOnTheNodeIsTheHarnessNotTheDataplane() {
        KernelCheck check = check(capture());

        assertThat(check.wrong("deny z to x/a on 81")).containsExactly(
                "step 1 try 1: z/b -> x/a TCP/81 expected blocked, got connected (the node saw no reply)");
        assertThat(check.summary().checked()).isEqualTo(16);
        assertThat(check.summary().agree()).isEqualTo(15);
        assertThat(check.summary().disagreements()).containsExactly(
                "deny z to x/a on 81, step 1 try 1: z/b -> x/a TCP/81 probe connected, the node saw no reply");
    }

    @Test
    void aReplyOnTheNodeInTheTrysWindowMeansTheDataplaneLetItThrough() {
        KernelCheck check = check(capture(reply(TRY1.plusSeconds(5), "z/b", "x/a", 81, "ESTABLISHED")));

        assertThat(check.wrong("deny z to x/a on 81")).containsExactly(
                "step 1 try 1: z/b -> x/a TCP/81 expected blocked, got connected (the node saw the destination reply)");
        assertThat(check.summary().agree()).as("the reply agrees with try 1's connection and lies outside try 2's window")
                .isEqualTo(16);
    }

    @Test
    void aReplyOutsideTheWindowOrATcpUpdateThatIsNoAnswerIsNotEvidence() {
        KernelCheck late = check(capture(reply(TRY2.plusSeconds(3), "z/b", "x/a", 81, "ESTABLISHED").replace("ESTABLISHED", "CLOSE"),
                reply(TRY2.plusSeconds(2), "z/b", "x/a", 81, "SYN_RECV")));

        assertThat(late.wrong("deny z to x/a on 81")).singleElement().asString().endsWith("(the node saw no reply)");
        assertThat(late.summary().disagree())
                .as("try 2's blocked z/b -> x/a:81 against the reply 2 s into its window: the probe and the kernel disagree")
                .isEqualTo(2);
    }

    @Test
    void withoutACaptureTheWrongProbesAreStillListedAndThereIsNoSummary() {
        KernelCheck check = check(null);

        assertThat(check.summary()).isNull();
        assertThat(check.wrong("deny z to x/a on 81")).singleElement().asString().endsWith("(the node's conntrack was not captured)");
        assertThat(check.wrong("another case")).isEmpty();
    }

    @Test
    void theReportPutsTheKernelsWordOnTheRetriedCaseAndItsAgreementInTheDocument() throws Exception {
        Files.writeString(dir.resolve("cyclonus-nft.log"), LOG);
        Files.writeString(dir.resolve("cyclonus-nft.conntrack"), String.join("\n", capture()) + "\n");
        Files.writeString(dir.resolve("cyclonus-nft.junit.xml"), """
                <testsuite tests="1" failures="0" time="" name="cyclonus">
                    <testcase classname="" name="deny z to x/a on 81" time=""></testcase>
                </testsuite>
                """);
        Path json = dir.resolve("out.json");

        int exit = new picocli.CommandLine(new UpstreamSuitesMain()).execute("--json", json.toString(), "--dir", dir.toString(),
                "--run", "cyclonus:nft");

        assertThat(exit).isZero();
        SuiteRun run = UpstreamSuitesMain.read(dir, "cyclonus", "nft");
        assertThat(run.retried()).singleElement().satisfies(r -> assertThat(r.reason())
                .contains("probed again: step 1", "wrong probes: step 1 try 1: z/b -> x/a TCP/81 expected blocked, got connected (the node saw no reply)"));
        assertThat(Files.readString(json)).contains("\"kernel\"", "\"checked\": 16", "\"agree\": 15", "\"disagree\": 1");
    }

    @Test
    void aCaptureThatEndedBeforeTheRunIsNoEvidenceAfterItsLastEventAndTheReportSaysSo() throws Exception {
        Files.writeString(dir.resolve("cyclonus-nft.log"), LOG);
        Files.writeString(dir.resolve("cyclonus-nft.conntrack"), String.join("\n", capture()) + "\n");
        Files.writeString(dir.resolve("cyclonus-nft.conntrack.ended"), "conntrack exited by itself with status 1\nconntrack v1.4.7: boom\n");
        Files.writeString(dir.resolve("cyclonus-nft.junit.xml"), """
                <testsuite tests="1" failures="0" time="" name="cyclonus">
                    <testcase classname="" name="deny z to x/a on 81" time=""></testcase>
                </testsuite>
                """);

        SuiteRun run = UpstreamSuitesMain.read(dir, "cyclonus", "nft");

        // The last event is 3 s into try 2, whose window runs to the next case: try 1 is covered, try 2 is not.
        assertThat(run.kernel().checked()).isEqualTo(8);
        assertThat(run.kernel().disagree()).isEqualTo(1);
        assertThat(run.kernel().captureEnded()).isEqualTo("conntrack exited by itself with status 1\nconntrack v1.4.7: boom");
        assertThat(SuitesTable.text(List.of(run))).contains(
                "the capture ended before the run did (conntrack exited by itself with status 1 | conntrack v1.4.7: boom): "
                        + "tries after its last event have no evidence");
    }

    @Test
    void aCaptureReadFromAFileKeepsSubSecondTimes() throws IOException {
        Path file = dir.resolve("c");
        Files.writeString(file, "[1796190234.668240]\t [UPDATE] udp      17 30 src=10.244.0.7 dst=10.96.0.10 sport=60088 dport=53 "
                + "src=10.244.0.2 dst=10.244.0.7 sport=53 dport=60088 id=3400290889\n");

        ConntrackReplies replies = ConntrackReplies.parse(Files.readAllLines(file));

        assertThat(replies.first()).isEqualTo(Instant.ofEpochSecond(1796190234, 668_240_000));
        ConntrackReplies.Flow dns = new ConntrackReplies.Flow("udp", "10.244.0.7", "10.244.0.2", 53);
        assertThat(replies.replied(dns, Instant.ofEpochSecond(1796190234), Instant.ofEpochSecond(1796190235))).isTrue();
        assertThat(replies.replied(dns, Instant.ofEpochSecond(1796190235), Instant.ofEpochSecond(1796190236))).isFalse();
    }
}
