package io.npmagent.pipelines.scale;

import java.util.Locale;

/**
 * One run of a scenario on one backend in one mode: how long until every policy was in the kernel, the
 * longest single kernel write, and the event-to-kernel delay percentiles.
 */
public record ScaleResult(String scenario, String backend, String mode, int netpols, double totalSeconds,
        double maxRestoreSeconds, double p50Seconds, double p99Seconds, double maxSeconds, int kernelWrites) {

    String json() {
        return String.format(Locale.ROOT,
                "{\"scenario\": \"%s\", \"backend\": \"%s\", \"mode\": \"%s\", \"netpols\": %d, \"total_seconds\": %.4f, "
                        + "\"max_restore_seconds\": %.4f, \"p50_seconds\": %.4f, \"p99_seconds\": %.4f, \"max_seconds\": %.4f, "
                        + "\"kernel_writes\": %d}",
                scenario, backend, mode, netpols, totalSeconds, maxRestoreSeconds, p50Seconds, p99Seconds, maxSeconds, kernelWrites);
    }
}
