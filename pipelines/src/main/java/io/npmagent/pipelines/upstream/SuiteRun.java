package io.npmagent.pipelines.upstream;

import java.util.List;

/**
 * One suite on one backend: its counts, and each failure and skip by name with its reason. The counts of
 * failures and skips are the lists' sizes ({@link #of}); they are components so the JSON carries them.
 * {@code retried} names what the suite probed again after a wrong first try (cyclonus' --retries): passed
 * or not, an operator should see it. {@code kernel}: the probe results held against the node's conntrack, where
 * it was captured (cyclonus), else null.
 */
record SuiteRun(String suite, String backend, int passed, int failed, int skipped, long seconds, List<Outcome> failures,
        List<Outcome> skips, List<Outcome> retried, KernelCheck.Summary kernel) {

    static SuiteRun of(String suite, String backend, int passed, long seconds, List<Outcome> failures, List<Outcome> skips) {
        return new SuiteRun(suite, backend, passed, failures.size(), skips.size(), seconds, List.copyOf(failures), List.copyOf(skips),
                List.of(), null);
    }

    /** A spec or case by name, and why it failed or was skipped. */
    record Outcome(String name, String reason) {}

    /** The same run with more skips (cases the suite's own filter left out, which its report does not name). */
    SuiteRun withSkips(List<Outcome> more) {
        List<Outcome> all = new java.util.ArrayList<>(skips);
        all.addAll(more);
        return new SuiteRun(suite, backend, passed, failed, all.size(), seconds, failures, List.copyOf(all), retried, kernel);
    }

    /** The same run with what the suite probed again. */
    SuiteRun withRetried(List<Outcome> more) {
        return new SuiteRun(suite, backend, passed, failed, skipped, seconds, failures, skips, List.copyOf(more), kernel);
    }

    /** The same run with its probe results' agreement with the kernel (null: not captured). */
    SuiteRun withKernel(KernelCheck.Summary summary) {
        return new SuiteRun(suite, backend, passed, failed, skipped, seconds, failures, skips, retried, summary);
    }

    /** A run that left no report: counted as one failure, so a crashed suite never reads as clean. */
    static SuiteRun missing(String suite, String backend, long seconds, String why) {
        return of(suite, backend, 0, seconds, List.of(new Outcome(suite + " run", why)), List.of());
    }
}
