package io.npmagent.pipelines.upstream;

import java.util.List;

/** One suite on one backend: its counts, and each failure and skip by name with its reason. */
record SuiteRun(String suite, String backend, int passed, int failed, int skipped, long seconds, List<Outcome> failures,
        List<Outcome> skips) {

    /** A spec or case by name, and why it failed or was skipped. */
    record Outcome(String name, String reason) {}

    /** The same run with more skips (cases the suite's own filter left out, which its report does not name). */
    SuiteRun withSkips(List<Outcome> more) {
        List<Outcome> all = new java.util.ArrayList<>(skips);
        all.addAll(more);
        return new SuiteRun(suite, backend, passed, failed, all.size(), seconds, failures, List.copyOf(all));
    }

    /** A run that left no report: counted as one failure, so a crashed suite never reads as clean. */
    static SuiteRun missing(String suite, String backend, long seconds, String why) {
        return new SuiteRun(suite, backend, 0, 1, 0, seconds, List.of(new Outcome(suite + " run", why)), List.of());
    }
}
