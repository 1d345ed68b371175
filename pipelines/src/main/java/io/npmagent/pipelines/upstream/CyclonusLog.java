package io.npmagent.pipelines.upstream;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The reasons in a cyclonus log. Its JUnit report says only that a case failed; the log has, per case
 * ("evaluating test case: DESCRIPTION"), each step's port and protocol and its count of wrong probes
 * ("Discrepancy found:3 wrong, 0 ignored, 78 correct"), followed by the tables of which ones.
 */
final class CyclonusLog {
    static final String CASE = "evaluating test case: ";
    static final Pattern STEP = Pattern.compile("^step (\\d+) on (.*):$");
    private static final Pattern COUNTS = Pattern.compile("(\\d+) wrong, (\\d+) ignored, (\\d+) correct");
    private static final Pattern LISTED = Pattern.compile("^test #\\d+: (.*)$");
    /** With --noisy, every try's table: "kube results, try 0:", then "try 1:" when the first was wrong somewhere. */
    static final Pattern TRY = Pattern.compile("^kube results, try (\\d+):$");
    private static final Pattern FAILED_TO_EXECUTE = Pattern.compile("^test case failed to execute for (.*)");

    private final Path file;
    private final Map<String, List<String>> stepsByCase;
    private final Map<String, List<String>> retriesByCase;

    private CyclonusLog(Path file, Map<String, List<String>> stepsByCase, Map<String, List<String>> retriesByCase) {
        this.file = file;
        this.stepsByCase = stepsByCase;
        this.retriesByCase = retriesByCase;
    }

    static CyclonusLog parse(Path file, List<String> lines) {
        Map<String, List<String>> steps = new LinkedHashMap<>();
        Map<String, List<String>> retries = new LinkedHashMap<>();
        List<String> current = null;
        String caseName = null;
        String step = null;
        for (String line : lines) {
            Matcher failed = FAILED_TO_EXECUTE.matcher(line);
            Matcher retry = TRY.matcher(line);
            if (line.startsWith(CASE)) {
                caseName = line.substring(CASE.length()).strip();
                current = steps.computeIfAbsent(caseName, k -> new ArrayList<>());
                step = null;
            } else if (current != null && step != null && retry.matches() && !retry.group(1).equals("0")) {
                retries.computeIfAbsent(caseName, k -> new ArrayList<>()).add(step + ": try " + (Integer.parseInt(retry.group(1)) + 1));
            } else if (failed.find()) {
                steps.computeIfAbsent(failed.group(1).replaceAll(" &\\{.*", "").strip(), k -> new ArrayList<>()).add("failed to execute: " + line);
            } else if (current != null && STEP.matcher(line).matches()) {
                Matcher m = STEP.matcher(line);
                m.matches();
                step = "step " + m.group(1) + " (" + m.group(2) + ")";
            } else if (current != null && step != null) {
                Matcher m = COUNTS.matcher(line);
                if (m.find() && !m.group(1).equals("0")) {
                    current.add(step + ": " + m.group(1) + " wrong, " + m.group(3) + " correct");
                }
            }
        }
        return new CyclonusLog(file, steps, retries);
    }

    /**
     * The cases a dry run listed ("test #N: DESCRIPTION", {@code cyclonus generate --mock --dry-run}
     * with the excluded tag included), as skips with REASON; none when the run wrote no such list.
     */
    static List<SuiteRun.Outcome> excluded(Path listing, String reason) throws IOException {
        if (!Files.exists(listing)) {
            return List.of();
        }
        List<SuiteRun.Outcome> out = new ArrayList<>();
        for (String line : Files.readAllLines(listing, StandardCharsets.UTF_8)) {
            Matcher m = LISTED.matcher(line);
            if (m.matches()) {
                out.add(new SuiteRun.Outcome(m.group(1).strip(), reason));
            }
        }
        return out;
    }

    /**
     * The cases in which some step's first try was wrong somewhere and cyclonus probed again (its --retries):
     * a passed case among them passed on a later try. The log's tables say which probes ("kube results, try 0").
     */
    List<SuiteRun.Outcome> retried() {
        List<SuiteRun.Outcome> out = new ArrayList<>();
        retriesByCase.forEach((name, tries) -> out.add(new SuiteRun.Outcome(name,
                "first try wrong somewhere, probed again: " + String.join("; ", tries) + " (its tables: " + file + ", \"" + CASE + name + "\")")));
        return out;
    }

    /** Why the case named so failed: its steps with wrong probes, and where the tables are. */
    String reason(String caseName) {
        List<String> steps = stepsByCase.get(caseName.strip());
        if (steps == null || steps.isEmpty()) {
            return "no wrong probe recorded for this case in " + file + " (see its section there)";
        }
        return String.join("; ", steps) + " (which ones: " + file + ", \"" + CASE + caseName.strip() + "\")";
    }
}
