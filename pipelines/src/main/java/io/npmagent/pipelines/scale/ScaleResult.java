package io.npmagent.pipelines.scale;

import java.util.Locale;

/**
 * One run of a scenario on one backend in one mode: how long until every policy was in the kernel, the
 * longest transaction (one backend apply), and the event-to-kernel delay percentiles.
 */
public record ScaleResult(String scenario, String backend, String mode, int netpols, double totalSeconds,
        double longestApplySeconds, double p50Seconds, double p99Seconds, double maxSeconds, int transactions) {

    String json() {
        return String.format(Locale.ROOT,
                "{\"scenario\": \"%s\", \"backend\": \"%s\", \"mode\": \"%s\", \"netpols\": %d, \"total_seconds\": %.4f, "
                        + "\"longest_apply_seconds\": %.4f, \"p50_seconds\": %.4f, \"p99_seconds\": %.4f, \"max_seconds\": %.4f, "
                        + "\"transactions\": %d}",
                scenario, backend, mode, netpols, totalSeconds, longestApplySeconds, p50Seconds, p99Seconds, maxSeconds, transactions);
    }
}
