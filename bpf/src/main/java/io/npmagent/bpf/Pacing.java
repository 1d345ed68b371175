package io.npmagent.bpf;

import io.npmagent.dataplane.bandwidth.BandwidthSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Whether the kernel has {@code sch_fq}, the qdisc that holds packets to the departure times EDT gives
 * them, and the status line that says how egress rates are bounded here.
 */
public final class Pacing {
    private Pacing() {}

    /** sch_fq loaded, built in, or installed as a module for the running kernel. */
    public static boolean fqAvailable() {
        if (Files.isDirectory(Path.of("/sys/module/sch_fq"))) {
            return true;
        }
        Path modules = Path.of("/lib/modules", System.getProperty("os.version"));
        try {
            if (Files.isReadable(modules.resolve("modules.builtin"))
                    && Files.readAllLines(modules.resolve("modules.builtin")).stream().anyMatch(l -> l.endsWith("/sch_fq.ko"))) {
                return true;
            }
            if (Files.isReadable(modules.resolve("modules.dep"))) {
                return Files.readAllLines(modules.resolve("modules.dep")).stream().anyMatch(l -> l.contains("/sch_fq.ko"));
            }
        } catch (IOException e) {
            return false;
        }
        return false;
    }

    /**
     * How pods' limits are enforced, for the backend's status line. Pacing through fq is not set up by
     * the agent yet, so with or without sch_fq the horizon bounds the rate; the line says which case
     * this host is.
     */
    public static String describe(BandwidthSettings s) {
        return String.format("bandwidth: egress EDT, rate bounded by drops past the %s horizon (%s), ECN marks from %s; "
                        + "ingress policed, %s deep", ms(s.horizon().toNanos()), fqAvailable()
                        ? "sch_fq is here but the agent does not set it up on the uplink yet"
                        : "no sch_fq on this kernel to pace departures", ms(s.ecnThreshold().toNanos()), ms(s.ingressBurst().toNanos()));
    }

    private static String ms(long nanos) {
        return nanos % 1_000_000 == 0 ? nanos / 1_000_000 + " ms" : String.format("%.3f ms", nanos / 1e6);
    }
}
