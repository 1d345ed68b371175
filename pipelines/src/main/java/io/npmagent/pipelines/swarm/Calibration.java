package io.npmagent.pipelines.swarm;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Whether the watchers cost the API server what real agents do: the same number of agents, once with
 * agent-shaped watchers beside the measured agent and once with real ones, through the same profiles,
 * compared figure by figure (the bar: within 10%).
 */
final class Calibration {
    static final String WATCHERS = "watchers (calibration)";
    static final String AGENTS = "real agents";
    static final List<String> PROFILES = List.of("idle", "churn");

    private Calibration() {}

    static String compare(List<SwarmRow> rows, int agents) {
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT,
                "Calibration at %d agents: watchers / real agents (1.00 = the same; the bar is within 10%%). CPU is in CPU seconds: "
                        + "real agents (JVMs starting on one core) take longer to list than the watchers, for the same work. The profile's "
                        + "own CPU leaves out what the API server spends anyway over as long (the fleet's idle rate) and the garbage "
                        + "collector's marking on idle time (Go: not compulsory), both of which grow with the profile's length. "
                        + "The harness's core busy near 1.00 means the real agents on it were starved: they read late, and "
                        + "what that costs the API server is this machine's, not a real cluster's.%n%n"
                        + "| profile | API CPU s | the profile's own API CPU s | deliveries/s | bytes/event | pod lists from etcd | API RSS "
                        + "| harness core busy |%n"
                        + "|---|---:|---:|---:|---:|---:|---:|---:|%n", agents));
        Optional<SwarmRow> wIdle = find(rows, agents, WATCHERS, "idle");
        Optional<SwarmRow> rIdle = find(rows, agents, AGENTS, "idle");
        for (String profile : List.of("start", "idle", "churn")) {
            Optional<SwarmRow> w = find(rows, agents, WATCHERS, profile);
            Optional<SwarmRow> r = find(rows, agents, AGENTS, profile);
            if (w.isEmpty() || r.isEmpty()) {
                continue;
            }
            ControlPlaneReading.Cost a = w.get().cost();
            ControlPlaneReading.Cost c = r.get().cost();
            String own = profile.equals("idle") || wIdle.isEmpty() || rIdle.isEmpty() ? "-"
                    : ratio("%.1f", ownCpu(a, wIdle.get().cost()), ownCpu(c, rIdle.get().cost()));
            b.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %.0f / %.0f | %.0f / %.0f MiB | %s / %s |%n", profile,
                    ratio("%.1f", a.apiCores() * a.seconds(), c.apiCores() * c.seconds()), own,
                    ratio("%,.0f", a.deliveries(), c.deliveries()), ratio("%,.0f", a.bytesPerEvent(), c.bytesPerEvent()),
                    a.podStorageLists(), c.podStorageLists(), a.apiRss() / 1048576.0, c.apiRss() / 1048576.0,
                    SwarmTable.share(a.harnessBusy()), SwarmTable.share(c.harnessBusy())));
        }
        return b.toString();
    }

    /** A profile's compulsory API CPU seconds less the same fleet's idle compulsory rate over as long. */
    static double ownCpu(ControlPlaneReading.Cost profile, ControlPlaneReading.Cost idle) {
        return profile.compulsoryApiCpu() - idle.compulsoryApiCpu() / idle.seconds() * profile.seconds();
    }

    private static String ratio(String format, double watchers, double agents) {
        return String.format(Locale.ROOT, format + " / " + format + " = %.2f", watchers, agents, watchers / agents);
    }

    private static Optional<SwarmRow> find(List<SwarmRow> rows, int agents, String fleet, String profile) {
        return rows.stream().filter(r -> r.agents() == agents && r.fleet().equals(fleet) && r.profile().equals(profile)).findFirst();
    }
}
