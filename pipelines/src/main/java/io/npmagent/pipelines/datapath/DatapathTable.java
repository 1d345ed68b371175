package io.npmagent.pipelines.datapath;

import io.npmagent.pipelines.bench.BenchJson;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The datapath figures side by side (rows backend × policies: connections per second to the server's
 * address and through its ClusterIP, each relative to that backend with no policy, throughput, whether
 * the intruder was blocked), and as JSON.
 */
final class DatapathTable {
    private DatapathTable() {}

    static String text(List<DatapathPoint> points) {
        StringBuilder sb = new StringBuilder(String.format("%-16s %8s %10s %8s %10s %8s %8s  %s%n", "backend", "policies", "conn/s", "vs 0",
                "svc conn/s", "vs 0", "Gbit/s", "intruder"));
        for (DatapathPoint p : points) {
            if (!p.ok()) {
                sb.append(String.format("%-16s %8s  %s: %s%n", p.backend(), p.policies() < 0 ? "-" : Integer.toString(p.policies()), p.status(),
                        firstLine(p.reason())));
                continue;
            }
            sb.append(String.format(Locale.ROOT, "%-16s %8d %10.0f %8s %10s %8s %8s  %s%n", p.backend(), p.policies(), p.connectionsPerSecond(),
                    versus(p, changeVsNone(points, p)), p.serviceSamples().isEmpty() ? "-"
                            : String.format(Locale.ROOT, "%.0f", p.serviceConnectionsPerSecond()),
                    p.serviceSamples().isEmpty() ? "-" : versus(p, serviceChangeVsNone(points, p)),
                    p.gbitSamples().isEmpty() ? "-" : String.format(Locale.ROOT, "%.2f", p.gbitPerSecond()), intruder(p)));
        }
        return sb.toString();
    }

    private static String versus(DatapathPoint p, double change) {
        return p.policies() == 0 ? "base" : Double.isNaN(change) ? "-" : String.format(Locale.ROOT, "%+.1f%%", change * 100);
    }

    /**
     * Connections per second relative to the same backend with no policy ({@code -0.031} is 3.1% fewer);
     * NaN when that row was not measured.
     */
    static double changeVsNone(List<DatapathPoint> points, DatapathPoint p) {
        return none(points, p).map(b -> p.connectionsPerSecond() / b.connectionsPerSecond() - 1).orElse(Double.NaN);
    }

    /** As {@link #changeVsNone}, through the ClusterIP, against the same backend's ClusterIP rate with no policy. */
    static double serviceChangeVsNone(List<DatapathPoint> points, DatapathPoint p) {
        return none(points, p).map(b -> p.serviceConnectionsPerSecond() / b.serviceConnectionsPerSecond() - 1).orElse(Double.NaN);
    }

    private static Optional<DatapathPoint> none(List<DatapathPoint> points, DatapathPoint p) {
        return points.stream().filter(b -> b.ok() && b.backend().equals(p.backend()) && b.policies() == 0).findFirst();
    }

    /**
     * "blocked" or "open", in capitals with the reason when it is not what the policies say it must be,
     * on the server's address or through its ClusterIP.
     */
    private static String intruder(DatapathPoint p) {
        if (p.enforcedAsExpected()) {
            return p.intruderBlocked() ? "blocked" : "open";
        }
        if (p.policies() == 0) {
            return "BLOCKED (no policy selects the server)" + path(p, true);
        }
        return "OPEN (policies not enforced)" + path(p, false);
    }

    /** Which path disagrees, when only one does. */
    private static String path(DatapathPoint p, boolean blocked) {
        boolean direct = Boolean.valueOf(blocked).equals(p.intruderBlocked());
        boolean service = Boolean.valueOf(blocked).equals(p.intruderBlockedViaService());
        return direct == service ? "" : direct ? " on the pod address" : " through the ClusterIP";
    }

    private static String firstLine(String text) {
        String t = text == null ? "" : text.strip();
        int nl = t.indexOf('\n');
        return nl < 0 ? t : t.substring(0, nl) + " ...";
    }

    static String json(String command, List<DatapathPoint> points) {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (DatapathPoint p : points) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("backend", p.backend());
            row.put("policies", p.policies() < 0 ? null : p.policies());
            row.put("status", p.status());
            if (p.reason() != null) {
                row.put("reason", p.reason());
            }
            if (p.ok()) {
                row.put("connectionsPerSecond", p.connectionsPerSecond());
                row.put("connectionsVsNone", finite(changeVsNone(points, p)));
                row.put("serviceConnectionsPerSecond", finite(p.serviceConnectionsPerSecond()));
                row.put("serviceConnectionsVsNone", finite(serviceChangeVsNone(points, p)));
                row.put("gbitPerSecond", finite(p.gbitPerSecond()));
                row.put("connectionSamples", p.connectionSamples());
                row.put("serviceConnectionSamples", p.serviceSamples());
                row.put("gbitSamples", p.gbitSamples());
                row.put("intruderBlocked", p.intruderBlocked());
                row.put("intruderBlockedViaService", p.intruderBlockedViaService());
            }
            rows.add(row);
        }
        return BenchJson.document(command, rows);
    }

    private static Double finite(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? null : v;
    }
}
