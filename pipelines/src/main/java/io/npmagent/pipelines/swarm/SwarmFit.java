package io.npmagent.pipelines.swarm;

import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * The constants the swarm's rows imply, by least squares over the swarm sizes, and what they extrapolate
 * to: the API server's CPU per 1,000 events delivered a second (churn), its memory per idle agent (idle),
 * the CPU one agent's full list and watch costs (the swarm's start, every agent at once: a restart storm), and from those the
 * cost of 1,000 and 5,000 nodes under the same churn. Straight lines: where the rows bend (a saturated core),
 * the fit says less than the rows, and the table beside it says where.
 */
final class SwarmFit {
    private SwarmFit() {}

    /** The fitted line {@code y = intercept + slope * x}. */
    record Line(double intercept, double slope, int points) {
        double at(double x) {
            return intercept + slope * x;
        }
    }

    static Line fit(List<SwarmRow> rows, ToDoubleFunction<SwarmRow> x, ToDoubleFunction<SwarmRow> y) {
        int n = rows.size();
        if (n < 2) {
            return new Line(Double.NaN, Double.NaN, n);
        }
        double sx = 0;
        double sy = 0;
        double sxx = 0;
        double sxy = 0;
        for (SwarmRow r : rows) {
            double a = x.applyAsDouble(r);
            double b = y.applyAsDouble(r);
            sx += a;
            sy += b;
            sxx += a * a;
            sxy += a * b;
        }
        double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
        return new Line((sy - slope * sx) / n, slope, n);
    }

    private static List<SwarmRow> of(List<SwarmRow> rows, String profile) {
        return rows.stream().filter(r -> r.fleet().equals("watchers") && r.profile().equals(profile)).toList();
    }

    /** The constants and the extrapolation, as text. */
    static String report(List<SwarmRow> rows) {
        Line cpu = fit(of(rows, "churn"), r -> r.cost().deliveries(), r -> r.cost().apiCores());
        Line perAgent = fit(of(rows, "churn"), SwarmRow::agents, r -> r.cost().deliveries());
        Line memory = fit(of(rows, "idle"), SwarmRow::agents, r -> r.cost().apiRss() / 1048576.0);
        // The swarm's start is every agent listing and watching at once: the restart storm's cost, per agent.
        Line storm = fit(of(rows, "start"), r -> r.agents() - 1, r -> r.cost().apiCores() * r.cost().seconds());
        if (cpu.points() < 2 && memory.points() < 2) {
            return "Constants: they need two swarm sizes or more (--agents).\n";
        }
        StringBuilder b = new StringBuilder("Constants (least squares over the swarm sizes):\n\n");
        b.append(String.format(Locale.ROOT, "- API server CPU per 1,000 events delivered a second: %.3f cores (churn, %d sizes)%n", cpu.slope() * 1000,
                cpu.points()));
        b.append(String.format(Locale.ROOT, "- events delivered a second per agent under churn: %.1f%n", perAgent.slope()));
        b.append(String.format(Locale.ROOT, "- API server memory per idle agent: %.2f MiB (idle; %.0f MiB with none)%n", memory.slope(), memory.intercept()));
        b.append(String.format(Locale.ROOT, "- one agent's full list and watch (all starting at once): %.3f CPU seconds%n%n", storm.slope()));
        b.append("Extrapolated, same cluster and churn (linear: one API server, nothing else saturated):\n\n");
        b.append("| nodes | events delivered/s | API server cores for them | API server memory MiB | a restart storm, CPU s |\n|---:|---:|---:|---:|---:|\n");
        for (int nodes : List.of(1_000, 5_000)) {
            double deliveries = perAgent.at(nodes);
            b.append(String.format(Locale.ROOT, "| %,d | %,.0f | %.1f | %,.0f | %,.0f |%n", nodes, deliveries, cpu.at(deliveries), memory.at(nodes),
                    storm.at(nodes - 1)));
        }
        return b.toString();
    }
}
