package io.npmagent.bpf;

import io.npmagent.bpf.libbpf.Capabilities;
import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.CommandRunner;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * BBR for pods, opt-in ({@code --bbr}): the node namespace's default TCP congestion control becomes
 * {@code bbr}, which Linux copies into every network namespace created after it (pods'), as Cilium's
 * bandwidth manager does. Only where the kernel keeps packets' timestamps across namespaces (5.18 and
 * later, {@link Capabilities#timestampsKeptAcrossNamespaces()}) and offers bbr; otherwise refused, with
 * the reason in the status line, and nothing changed.
 */
public final class Bbr {
    private static final String DEFAULT = "net.ipv4.tcp_congestion_control";
    private static final String AVAILABLE = "net.ipv4.tcp_available_congestion_control";

    private Bbr() {}

    /** What the probe found: timestamps kept, the algorithms the namespace offers, its default now. */
    public record Probe(boolean timestampsKept, List<String> available, String current) {}

    public static Probe probe(CommandRunner node) {
        return new Probe(Capabilities.timestampsKeptAcrossNamespaces(), Arrays.asList(sysctl(node, AVAILABLE).split("\\s+")),
                sysctl(node, DEFAULT));
    }

    /** Why BBR cannot be turned on, if it cannot. */
    public static Optional<String> refusal(Probe p) {
        if (!p.timestampsKept()) {
            return Optional.of("this kernel clears packets' timestamps when they leave a pod's namespace (needs 5.18: bpf_skb_set_tstamp)");
        }
        if (!p.available().contains("bbr")) {
            return Optional.of("bbr is not among the congestion controls this kernel offers (" + String.join(" ", p.available()) + ")");
        }
        return Optional.empty();
    }

    /** Turns BBR on where it may be, and says what happened, for the backend's status line. */
    public static String enable(CommandRunner node) {
        Probe p = probe(node);
        Optional<String> no = refusal(p);
        if (no.isPresent()) {
            return "bbr: refused: " + no.get();
        }
        if (!p.current().equals("bbr")) {
            CommandResult r = node.run(List.of("sysctl", "-w", DEFAULT + "=bbr"), "", Duration.ofSeconds(10));
            if (!r.ok()) {
                return "bbr: refused: cannot set " + DEFAULT + ": " + r.errorSummary();
            }
        }
        return "bbr: the default congestion control for pods created from now on (was " + p.current() + ")";
    }

    private static String sysctl(CommandRunner node, String key) {
        CommandResult r = node.run(List.of("sysctl", "-n", key), "", Duration.ofSeconds(10));
        return r.ok() ? r.stdout().strip() : "";
    }
}
