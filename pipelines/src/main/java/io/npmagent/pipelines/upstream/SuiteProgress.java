package io.npmagent.pipelines.upstream;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A suite's progress, one line per finished spec or case, read from its log as it grows: e2e.test's
 * ginkgo lines ({@code Will run N of M specs}, a spec's {@code [sig-network]} title, {@code • [N seconds]}
 * when it passed, {@code • [FAILED]} and the like when not) and cyclonus' ({@code testing N cases},
 * {@code test #N: DESCRIPTION}, {@code starting test case #N}, a probe round's second try,
 * {@code finished policy #N}), and network-policy-api's (Go's {@code === RUN   TestConformanceProfiles/NAME} as each
 * conformance test starts, {@code --- PASS: TestConformanceProfiles/NAME (Ns)} at the end). Progress only: the report reads the JUnit file and the log whole.
 */
final class SuiteProgress {
    private static final Pattern E2E_TOTAL = Pattern.compile("^Will run (\\d+) of \\d+ specs");
    private static final Pattern CYCLONUS_TOTAL = Pattern.compile("^testing (\\d+) cases");
    private static final Pattern FAILED = Pattern.compile("^• \\[(FAILED|PANICKED|TIMEDOUT)\\]");
    private static final Pattern PASSED = Pattern.compile("^• \\[[0-9.]+ seconds\\]");
    private static final Pattern STARTING = Pattern.compile("^starting test case #(\\d+)");
    private static final Pattern RETRY = Pattern.compile("running kube probe on try [2-9]");
    private static final Pattern DESCRIBED = Pattern.compile("^test #(\\d+): (.*)");
    private static final Pattern FINISHED = Pattern.compile("^finished policy #\\d+");
    private static final Pattern GO_TEST_START = Pattern.compile("^=== RUN\\s+" + CnpLog.ROOT + "/([^/\\s]+)$");
    private static final Pattern GO_TEST = Pattern.compile("^\\s*--- (PASS|FAIL|SKIP): " + CnpLog.ROOT + "/([^/\\s]+) \\(([0-9.]+s)\\)");

    private final String prefix;
    private final Map<String, String> descriptions = new HashMap<>();
    private String total = "";
    private String spec = "";
    private int done;
    private int started;
    private String currentCase = "";
    private String retried = "";

    /** {@code prefix}: what each line starts with ({@code upstream-suites: e2e [bpf]}). */
    SuiteProgress(String prefix) {
        this.prefix = prefix;
    }

    /** The progress line this log line makes, if any. */
    Optional<String> line(String line) {
        Matcher m;
        if ((m = E2E_TOTAL.matcher(line)).find()) {
            total = m.group(1);
            return say(total + " specs");
        }
        if ((m = CYCLONUS_TOTAL.matcher(line)).find()) {
            total = m.group(1);
            return say(total + " cases");
        }
        if (line.startsWith("[sig-network]") && !line.contains("[SKIPPED]")) {
            spec = line;
        }
        if (FAILED.matcher(line).find()) {
            return say(++done + "/" + total + " FAILED " + spec);
        }
        if (PASSED.matcher(line).find()) {
            return say(++done + "/" + total + " passed " + spec);
        }
        if ((m = STARTING.matcher(line)).find()) {
            currentCase = m.group(1);
            retried = "";
        }
        if (RETRY.matcher(line).find()) {
            retried = " (a step needed a second try)";
        }
        if ((m = DESCRIBED.matcher(line)).find()) {
            descriptions.put(m.group(1), m.group(2));
        }
        if ((m = GO_TEST_START.matcher(line)).find()) { // Go prints a test's result when its parent ends: the start is the progress
            return say("test " + (++started) + ": " + m.group(1));
        }
        if ((m = GO_TEST.matcher(line)).find()) {
            return say(++done + " " + m.group(1) + " " + m.group(2) + " (" + m.group(3) + ")");
        }
        if (FINISHED.matcher(line).find()) {
            return say("case " + currentCase + "/" + total + " done: " + descriptions.getOrDefault(currentCase, "") + retried);
        }
        return Optional.empty();
    }

    private Optional<String> say(String what) {
        return Optional.of(prefix + ": " + what);
    }
}
