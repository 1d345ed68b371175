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
                "Calibration at %d agents: watchers / real agents (1.00 = the same; the bar is within 10%%). The start is compared in CPU "
                        + "seconds: real agents (JVMs starting on one core) take longer to list than the watchers, for the same work.%n%n"
                        + "| profile | API CPU s | API cores | deliveries/s | bytes/event | API RSS |%n|---|---:|---:|---:|---:|---:|%n", agents));
        for (String profile : List.of("start", "idle", "churn")) {
            Optional<SwarmRow> w = find(rows, agents, WATCHERS, profile);
            Optional<SwarmRow> r = find(rows, agents, AGENTS, profile);
            if (w.isEmpty() || r.isEmpty()) {
                continue;
            }
            ControlPlaneReading.Cost a = w.get().cost();
            ControlPlaneReading.Cost c = r.get().cost();
            double aCpu = a.apiCores() * a.seconds();
            double cCpu = c.apiCores() * c.seconds();
            b.append(String.format(Locale.ROOT, "| %s | %.1f / %.1f = %.2f | %.2f / %.2f = %.2f | %,.0f / %,.0f = %.2f | %,.0f / %,.0f = %.2f | %.0f / %.0f MiB |%n",
                    profile, aCpu, cCpu, aCpu / cCpu, a.apiCores(), c.apiCores(), a.apiCores() / c.apiCores(), a.deliveries(), c.deliveries(), a.deliveries() / c.deliveries(),
                    a.bytesPerEvent(), c.bytesPerEvent(), a.bytesPerEvent() / c.bytesPerEvent(), a.apiRss() / 1048576.0, c.apiRss() / 1048576.0));
        }
        return b.toString();
    }

    private static Optional<SwarmRow> find(List<SwarmRow> rows, int agents, String fleet, String profile) {
        return rows.stream().filter(r -> r.agents() == agents && r.fleet().equals(fleet) && r.profile().equals(profile)).findFirst();
    }
}
