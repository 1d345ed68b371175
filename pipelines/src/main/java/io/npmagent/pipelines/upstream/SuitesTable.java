package io.npmagent.pipelines.upstream;

import java.util.List;

/** The runs side by side, then each failure, retry and skip by name. */
final class SuitesTable {
    private SuitesTable() {}

    static String text(List<SuiteRun> runs) {
        StringBuilder sb = new StringBuilder(String.format("%-9s %-16s %7s %7s %8s %9s%n", "suite", "backend", "passed", "failed", "skipped",
                "time"));
        for (SuiteRun r : runs) {
            sb.append(String.format("%-9s %-16s %7d %7d %8d %7d s%n", r.suite(), r.backend(), r.passed(), r.failed(), r.skipped(), r.seconds()));
        }
        for (SuiteRun r : runs) {
            if (r.kernel() != null) {
                sb.append(String.format("KERNEL  %s [%s] %d probe results held against the node's conntrack: %d agree, %d disagree%n",
                        r.suite(), r.backend(), r.kernel().checked(), r.kernel().agree(), r.kernel().disagree()));
                if (r.kernel().captureEnded() != null) {
                    sb.append("        the capture ended before the run did (").append(oneLine(r.kernel().captureEnded()))
                            .append("): tries after its last event have no evidence\n");
                }
                r.kernel().disagreements().forEach(d -> sb.append("        ").append(d).append('\n'));
            }
        }
        for (SuiteRun r : runs) {
            for (SuiteRun.Outcome f : r.failures()) {
                sb.append(String.format("FAILED  %s [%s] %s%n        %s%n", r.suite(), r.backend(), f.name(), oneLine(f.reason())));
            }
            for (SuiteRun.Outcome t : r.retried()) {
                sb.append(String.format("RETRIED %s [%s] %s%n        %s%n", r.suite(), r.backend(), t.name(), oneLine(t.reason())));
            }
            for (SuiteRun.Outcome s : r.skips()) {
                sb.append(String.format("SKIPPED %s [%s] %s%n        %s%n", r.suite(), r.backend(), s.name(), oneLine(s.reason())));
            }
        }
        return sb.toString();
    }

    private static String oneLine(String text) {
        String line = text.strip().replaceAll("\\s*\\n\\s*", " | ");
        return line.length() > 300 ? line.substring(0, 297) + "..." : line;
    }
}
