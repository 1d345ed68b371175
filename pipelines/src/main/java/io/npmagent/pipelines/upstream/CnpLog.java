package io.npmagent.pipelines.upstream;

import io.npmagent.pipelines.upstream.SuiteRun.Outcome;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * network-policy-api's conformance suite as its log tells it ({@code cnp-conformance.test -test.v}: Go's testing
 * output, one top-level test per conformance test under {@value #ROOT}, each with subtests), counted per test:
 *
 * <ul>
 * <li><b>not run (SCTP)</b>: a test that probes SCTP ({@link #sctpTests}, read from the pinned module's source)
 * and failed on SCTP probes alone, or passed (its SCTP probes all expected a drop, which a kernel without SCTP
 * gives whatever the policy; such a pass proves nothing about them, so it is never counted as passed); also a
 * test the suite skipped itself (its message says why);</li>
 * <li><b>failed</b>: any failure that is not an SCTP probe (the failing probe, its expectation and what it got,
 * per subtest), a test with no result (the run ended under it);</li>
 * <li><b>passed</b>: the rest.</li>
 * </ul>
 * A failure is attributed to a probe by the log: {@code PokeServer} logs every failed try ({@code FAILED Command
 * was [/agnhost connect --protocol=P HOST:PORT]}, then what was expected) and testify's {@code Error:} block ends
 * the subtest's try; the last probe logged before that block in that subtest is the one that failed.
 */
final class CnpLog {
    static final String ROOT = "TestConformanceProfiles";
    static final String SCTP_REASON = "probes SCTP, which this kernel has no sockets for";

    private static final Pattern EVENT = Pattern.compile("^=== (RUN|CONT|NAME)\\s+(\\S+)");
    private static final Pattern RESULT = Pattern.compile("^\\s*--- (PASS|FAIL|SKIP): (\\S+) \\(");
    private static final Pattern PROBE = Pattern.compile("FAILED (?:Command was|to execute command) \\[([^\\]]*)\\]");
    private static final Pattern PROTOCOL = Pattern.compile("--protocol=(\\w+)");
    private static final Pattern EXPECTED = Pattern.compile("(Expected connection .*|FAILED to execute command .*)");
    private static final Pattern ERROR = Pattern.compile("^\\s+Error:\\s+(.*)");
    private static final Pattern ERROR_TEST = Pattern.compile("^\\s+Test:\\s+(\\S+)");
    private static final Pattern LOG = Pattern.compile("^\\s+\\S+\\.go:\\d+: (.*)");
    private static final Pattern TEST_DECL = Pattern.compile("(?m)^var \\w+ = suite\\.ConformanceTest\\{");
    private static final Pattern SHORT_NAME = Pattern.compile("ShortName:\\s*\"([^\"]+)\"");

    private CnpLog() {}

    /** One failed assertion: the (sub)test it ended, the probe that failed (null: not a probe), its protocol, why. */
    record Failure(String test, String probe, String protocol, String why) {
        boolean sctp() {
            return "sctp".equals(protocol);
        }

        String describe() {
            return leaf(test) + ": " + (probe == null ? why : probe + ": " + why);
        }
    }

    /** A conformance test: its result (PASS, FAIL, SKIP; null: none in the log), its subtests' results, its failures. */
    record Test(String name, String result, Map<String, String> subtests, List<Failure> failures, String lastLog) {}

    /** The ShortNames of the conformance tests whose source probes SCTP, from the suite's test files' texts. */
    static Set<String> sctpTests(List<String> sources) {
        Set<String> out = new TreeSet<>();
        for (String source : sources) {
            Matcher m = TEST_DECL.matcher(source);
            List<Integer> starts = new ArrayList<>();
            while (m.find()) {
                starts.add(m.start());
            }
            for (int i = 0; i < starts.size(); i++) {
                String block = source.substring(starts.get(i), i + 1 < starts.size() ? starts.get(i + 1) : source.length());
                Matcher name = SHORT_NAME.matcher(block);
                if (name.find() && block.contains("\"sctp\"")) {
                    out.add(name.group(1));
                }
            }
        }
        return out;
    }

    /** The log's conformance tests, in the order they started. */
    static Map<String, Test> parse(List<String> lines) {
        Map<String, String> results = new LinkedHashMap<>();
        Map<String, List<Failure>> failures = new LinkedHashMap<>();
        Map<String, Map<String, String>> subtests = new LinkedHashMap<>();
        Map<String, String> lastProbe = new LinkedHashMap<>();
        Map<String, String> lastWhy = new LinkedHashMap<>();
        Map<String, String> lastLog = new LinkedHashMap<>();
        List<String> order = new ArrayList<>();
        String current = null;
        String pendingError = null;
        for (String line : lines) {
            Matcher m;
            if ((m = EVENT.matcher(line)).find()) {
                current = m.group(2);
                String top = top(current);
                if (top != null && !order.contains(top)) {
                    order.add(top);
                }
                continue;
            }
            if ((m = RESULT.matcher(line)).find()) {
                String name = m.group(2);
                String top = top(name);
                if (top != null) {
                    if (name.equals(top)) {
                        results.put(top, m.group(1));
                    } else {
                        subtests.computeIfAbsent(top, k -> new LinkedHashMap<>()).put(name, m.group(1));
                    }
                    if (!order.contains(top)) {
                        order.add(top);
                    }
                }
                continue;
            }
            if ((m = PROBE.matcher(line)).find() && current != null) {
                lastProbe.put(current, m.group(1));
            }
            if ((m = EXPECTED.matcher(line)).find() && current != null) {
                lastWhy.put(current, m.group(1).strip());
            }
            if ((m = ERROR.matcher(line)).find()) {
                pendingError = m.group(1).strip();
                continue;
            }
            if ((m = ERROR_TEST.matcher(line)).find() && pendingError != null) {
                record(failures, m.group(1), pendingError, lastProbe, lastWhy);
                pendingError = null;
                continue;
            }
            if ((m = LOG.matcher(line)).find() && current != null) {
                if (pendingError != null) { // an Error: block without its Test: line
                    record(failures, current, pendingError, lastProbe, lastWhy);
                    pendingError = null;
                }
                lastLog.put(current, m.group(1).strip());
            }
        }
        Map<String, Test> out = new LinkedHashMap<>();
        for (String top : order) {
            List<Failure> f = new ArrayList<>();
            failures.forEach((name, list) -> {
                if (name.equals(top) || name.startsWith(top + "/")) {
                    f.addAll(list);
                }
            });
            String log = lastLog.entrySet().stream().filter(e -> e.getKey().equals(top) || e.getKey().startsWith(top + "/"))
                    .map(Map.Entry::getValue).reduce((a, b) -> b).orElse("");
            out.put(top, new Test(top, results.get(top), subtests.getOrDefault(top, Map.of()), List.copyOf(f), log));
        }
        return out;
    }

    private static void record(Map<String, List<Failure>> failures, String test, String error, Map<String, String> lastProbe,
            Map<String, String> lastWhy) {
        String probe = lastProbe.remove(test);
        String why = lastWhy.remove(test);
        String protocol = null;
        if (probe != null) {
            Matcher p = PROTOCOL.matcher(probe);
            protocol = p.find() ? p.group(1).toLowerCase(java.util.Locale.ROOT) : null;
        }
        failures.computeIfAbsent(test, k -> new ArrayList<>()).add(new Failure(test, probe, protocol, why == null ? error : why + " (" + error + ")"));
    }

    /** The counts of a run: per conformance test, as this class's comment says. */
    static SuiteRun run(String backend, long seconds, List<String> lines, Set<String> sctpTests) {
        Map<String, Test> tests = parse(lines);
        int passed = 0;
        List<Outcome> failed = new ArrayList<>();
        List<Outcome> notRun = new ArrayList<>();
        for (Test t : tests.values()) {
            String name = leaf(t.name());
            boolean probesSctp = sctpTests.contains(name);
            List<Failure> other = t.failures().stream().filter(f -> !f.sctp()).toList();
            long sctpFailures = t.failures().size() - other.size();
            String subs = subtests(t);
            if (t.result() == null) {
                failed.add(new Outcome(name, "no result: the run ended during it" + subs + lastLog(t)));
            } else if (t.result().equals("SKIP")) {
                notRun.add(new Outcome(name, "skipped by the suite: " + t.lastLog()));
            } else if (t.result().equals("FAIL") && (!other.isEmpty() || t.failures().isEmpty())) {
                String why = t.failures().isEmpty() ? "failed without a probe's failure in the log" + lastLog(t)
                        : String.join("; ", other.stream().map(Failure::describe).toList());
                failed.add(new Outcome(name, why + subs + (sctpFailures > 0 ? " (and " + sctpFailures + " SCTP probe(s) failed: " + SCTP_REASON + ")" : "")));
            } else if (t.result().equals("FAIL") || probesSctp) {
                String how = t.result().equals("FAIL") ? "every failure an SCTP probe (" + sctpFailures + ", first: " + t.failures().get(0).describe() + ")"
                        : "passed, but its SCTP probes all expect a drop, which proves nothing here";
                notRun.add(new Outcome(name, SCTP_REASON + ": " + how + subs));
            } else {
                passed++;
            }
        }
        if (tests.isEmpty()) {
            failed.add(new Outcome(ROOT, "no conformance test ran (the suite's setup failed?)"));
        }
        return SuiteRun.of("cnp", backend, passed, seconds, failed, notRun);
    }

    private static String subtests(Test t) {
        if (t.subtests().isEmpty()) {
            return "";
        }
        Map<String, Integer> counts = new LinkedHashMap<>();
        t.subtests().values().forEach(r -> counts.merge(r.toLowerCase(java.util.Locale.ROOT), 1, Integer::sum));
        return " [subtests: " + String.join(", ", counts.entrySet().stream().map(e -> e.getValue() + " " + e.getKey()).toList()) + "]";
    }

    private static String lastLog(Test t) {
        return t.lastLog().isEmpty() ? "" : " (last log line: " + t.lastLog() + ")";
    }

    /** ROOT/NAME of a test or subtest name, null when it is not under ROOT (or is ROOT itself). */
    private static String top(String name) {
        if (!name.startsWith(ROOT + "/")) {
            return null;
        }
        int slash = name.indexOf('/', ROOT.length() + 1);
        return slash < 0 ? name : name.substring(0, slash);
    }

    /** A (sub)test's name without ROOT/. */
    static String leaf(String name) {
        return name.startsWith(ROOT + "/") ? name.substring(ROOT.length() + 1) : name;
    }
}
