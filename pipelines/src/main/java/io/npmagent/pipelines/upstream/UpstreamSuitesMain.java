package io.npmagent.pipelines.upstream;

import com.google.gson.GsonBuilder;
import io.npmagent.harness.controlplane.Checkout;
import io.npmagent.harness.controlplane.GoModules;
import io.npmagent.harness.controlplane.NetworkPolicyApi;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Reads what {@code pipelines/upstream-suites} left in its directory (per run SUITE-BACKEND.junit.xml,
 * .log and .seconds; for cnp the log and its report YAML), writes the JSON document and prints the table. Exits 1 when any run failed.
 */
@Command(name = "upstream-suites-report", mixinStandardHelpOptions = true)
public final class UpstreamSuitesMain implements Callable<Integer> {
    /**
     * The specs of e2e.test that judge a NetworkPolicy implementation, and the two of a pod network on several
     * nodes (no SNAT between pods, a source address kept through a ClusterIP): {@link SuiteCommands}' focus.
     */
    static final Pattern E2E_OURS = Pattern.compile(SuiteCommands.E2E_FOCUS);
    /** What the run skips of them, and why: this kernel has no SCTP sockets. */
    static final Pattern E2E_SKIPPED = Pattern.compile(SuiteCommands.E2E_SKIP);
    static final String E2E_SKIP_REASON = "[Feature:SCTPConnectivity]: this kernel has no SCTP sockets";
    static final String CYCLONUS_SKIP_REASON = "tagged sctp: this kernel has no SCTP sockets";

    @Option(names = "--json", required = true, description = "the document to write")
    Path json;

    @Option(names = "--dir", required = true, description = "the runs' raw output")
    Path dir;

    @Option(names = "--run", required = true, description = "SUITE:BACKEND, in order")
    List<String> runs;

    @Option(names = "--seconds", description = "the whole run's wall time")
    long seconds;

    public static void main(String[] args) {
        System.exit(new CommandLine(new UpstreamSuitesMain()).execute(args));
    }

    @Override
    public Integer call() throws IOException {
        return report(json, dir, runs, seconds);
    }

    /** Writes {@code json} from the runs' output in {@code dir} and prints the table; 1 when any run failed. */
    static int report(Path json, Path dir, List<String> runs, long seconds) throws IOException {
        List<SuiteRun> results = new ArrayList<>();
        for (String run : runs) {
            String[] parts = run.split(":", 2);
            results.add(read(dir, parts[0], parts[1]));
        }
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("command", "pipelines/upstream-suites");
        doc.put("seconds", seconds);
        doc.put("cores", Runtime.getRuntime().availableProcessors());
        doc.put("kernel", System.getProperty("os.version"));
        doc.put("raw", dir.toString());
        doc.put("suites", results);
        Files.writeString(json, new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create().toJson(doc) + "\n");
        System.out.print(SuitesTable.text(results));
        return results.stream().anyMatch(r -> r.failed() > 0) ? 1 : 0;
    }

    static SuiteRun read(Path dir, String suite, String backend) throws IOException {
        Path junit = dir.resolve(suite + "-" + backend + ".junit.xml");
        Path log = dir.resolve(suite + "-" + backend + ".log");
        Path secondsFile = dir.resolve(suite + "-" + backend + ".seconds");
        long took = Files.exists(secondsFile) ? Long.parseLong(Files.readString(secondsFile).strip()) : 0;
        if (suite.equals("cnp")) {
            return cnp(dir, backend, log, took);
        }
        if (!Files.exists(junit)) {
            return SuiteRun.missing(suite, backend, took, "no JUnit report: the run ended before writing one; see " + log + ": "
                    + lastLines(log, 5));
        }
        return switch (suite) {
            case "e2e" -> JUnitReport.read(junit, suite, backend, took, name -> E2E_OURS.matcher(name).find(), UpstreamSuitesMain::e2eSkip,
                    (name, text) -> text.strip());
            case "cyclonus" -> {
                List<String> lines = Files.exists(log) ? Files.readAllLines(log, StandardCharsets.UTF_8) : List.of();
                CyclonusLog cyclonusLog = CyclonusLog.parse(log, lines);
                KernelCheck kernel = kernelCheck(lines, dir.resolve(suite + "-" + backend + ".conntrack"));
                SuiteRun run = JUnitReport.read(junit, suite, backend, took, name -> true, (name, text) -> text,
                        (name, text) -> withWrongProbes(cyclonusLog.reason(name), kernel.wrong(name)));
                yield run.withSkips(CyclonusLog.excluded(dir.resolve(suite + "-" + backend + ".excluded"), CYCLONUS_SKIP_REASON))
                        .withRetried(cyclonusLog.retried().stream()
                                .map(r -> new SuiteRun.Outcome(r.name(), withWrongProbes(r.reason(), kernel.wrong(r.name())))).toList())
                        .withKernel(kernel.summary());
            }
            default -> throw new IllegalArgumentException("unknown suite " + suite + " (e2e, cyclonus, cnp)");
        };
    }

    /**
     * network-policy-api's suite: counted from its log ({@link CnpLog}); the tests that probe SCTP read from the
     * pinned module's source. No report YAML: the suite ended before writing it (its setup failed, or the run was
     * cut short), and the log's last lines say why.
     */
    static SuiteRun cnp(Path dir, String backend, Path log, long took) throws IOException {
        Path report = dir.resolve("cnp-" + backend + ".report.yaml");
        List<String> lines = Files.exists(log) ? Files.readAllLines(log, StandardCharsets.UTF_8) : List.of();
        if (!Files.exists(report)) {
            SuiteRun counted = CnpLog.run(backend, took, lines, cnpSctpTests());
            List<SuiteRun.Outcome> failures = new ArrayList<>(counted.failures());
            failures.add(0, new SuiteRun.Outcome("cnp run", "no report (" + report.getFileName() + "): the suite ended before writing one; see "
                    + log + ": " + lastLines(log, 5)));
            return SuiteRun.of("cnp", backend, counted.passed(), took, failures, counted.skips());
        }
        return CnpLog.run(backend, took, lines, cnpSctpTests());
    }

    /** The tests of the pinned network-policy-api module that probe SCTP, from its conformance tests' source. */
    static Set<String> cnpSctpTests() throws IOException {
        Path tests = GoModules.dir(Checkout.root()
                .resolve("pipelines/upstream/network-policy-api"), NetworkPolicyApi.MODULE).resolve("conformance/tests");
        List<String> sources = new ArrayList<>();
        try (var files = Files.list(tests)) {
            for (Path f : files.filter(f -> f.toString().endsWith(".go")).sorted().toList()) {
                sources.add(Files.readString(f, StandardCharsets.UTF_8));
            }
        }
        return CnpLog.sctpTests(sources);
    }

    /**
     * The log's probe rounds against CAPTURE, the node's conntrack replies during the run (absent: no kernel evidence).
     * CAPTURE.ended, written by the script when the capture exited before the run did, says how it ended.
     */
    static KernelCheck kernelCheck(List<String> lines, Path capture) throws IOException {
        ConntrackReplies replies = Files.exists(capture) ? ConntrackReplies.parse(Files.readAllLines(capture, StandardCharsets.UTF_8)) : null;
        Path ended = capture.resolveSibling(capture.getFileName() + ".ended");
        if (replies != null && Files.exists(ended)) {
            replies = replies.endedEarly(Files.readString(ended, StandardCharsets.UTF_8).strip());
        }
        return KernelCheck.of(CyclonusRounds.parse(lines), replies);
    }

    private static String withWrongProbes(String reason, List<String> wrong) {
        return wrong.isEmpty() ? reason : reason + "; wrong probes: " + String.join("; ", wrong);
    }

    /** A spec the script's skip pattern excluded, or one that skipped itself (its message says why); not the unselected. */
    static String e2eSkip(String name, String message) {
        if (E2E_SKIPPED.matcher(name).find()) {
            return E2E_SKIP_REASON;
        }
        return message.equals("skipped") ? null : message;
    }

    private static String lastLines(Path log, int n) throws IOException {
        if (!Files.exists(log)) {
            return "(no log)";
        }
        List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - n), lines.size()));
    }
}
