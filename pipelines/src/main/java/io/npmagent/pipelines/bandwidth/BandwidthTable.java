package io.npmagent.pipelines.bandwidth;

import io.npmagent.pipelines.bench.BenchJson;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** The pipeline's figures: a table, the bar's two comparisons, and the JSON of issue #6. */
final class BandwidthTable {
    private BandwidthTable() {}

    static String text(List<BandwidthPoint> points) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "%-9s %-5s %-8s %9s %8s %12s %9s %11s %10s %10s %10s%n", "test", "shaper", "limits",
                "limit", "streams", "achieved", "vs limit", "retransmits", "RR p50 us", "RR p99 us", "p99.9 us"));
        for (BandwidthPoint p : points) {
            String limit = p.limitBitsPerSecond() == 0 ? "-" : mbit(p.limitBitsPerSecond());
            if (!p.ok()) {
                out.append(String.format(Locale.ROOT, "%-9s %-5s %-8s %9s %8d  FAILED: %s%n", p.test(), p.shaper(), p.direction(), limit,
                        p.streams(), p.error()));
                continue;
            }
            RrProbe.Latency rr = p.latency();
            out.append(String.format(Locale.ROOT, "%-9s %-5s %-8s %9s %8d %12s %9s %11d %10s %10s %10s%n", p.test(), p.shaper(), p.direction(),
                    limit, p.streams(), mbit((long) p.achievedBitsPerSecond()),
                    Double.isNaN(p.deviation()) ? "-" : String.format(Locale.ROOT, "%+.1f%%", 100 * p.deviation()), p.retransmits(),
                    rr == null ? "-" : us(rr.p50()), rr == null ? "-" : us(rr.p99()), rr == null ? "-" : us(rr.p999())));
        }
        rrRatio(points).ifPresent(r -> out.append(String.format(Locale.ROOT,
                "RR p99 under load at %s: edt %.0f us, tbf %.0f us: %.1fx lower with edt%n", mbit(r.edt.limitBitsPerSecond()),
                r.edt.latency().p99(), r.tbf.latency().p99(), r.tbf.latency().p99() / r.edt.latency().p99())));
        return out.toString();
    }

    /** The latency test's edt and tbf rows, when both measured their probe. */
    record Pair(BandwidthPoint edt, BandwidthPoint tbf) {}

    static Optional<Pair> rrRatio(List<BandwidthPoint> points) {
        Optional<BandwidthPoint> edt = latencyRow(points, "edt");
        Optional<BandwidthPoint> tbf = latencyRow(points, "tbf");
        return edt.isPresent() && tbf.isPresent() ? Optional.of(new Pair(edt.get(), tbf.get())) : Optional.empty();
    }

    private static Optional<BandwidthPoint> latencyRow(List<BandwidthPoint> points, String shaper) {
        return points.stream().filter(p -> p.ok() && p.latency() != null && p.shaper().equals(shaper)).findFirst();
    }

    static String mbit(long bits) {
        return bits >= 1_000_000_000 && bits % 1_000_000_000 == 0 ? bits / 1_000_000_000 + " Gbit/s"
                : String.format(Locale.ROOT, bits % 1_000_000 == 0 ? "%.0f Mbit/s" : "%.1f Mbit/s", bits / 1e6);
    }

    private static String us(double v) {
        return String.format(Locale.ROOT, "%.0f", v);
    }

    /** {@code {command, cores, kernel, results: [{shaper, limit_mbit, achieved_mbit, rr_p50_us, rr_p99_us, rr_p999_us, retransmits, ...}]}}. */
    static String json(String command, List<BandwidthPoint> points) {
        return BenchJson.document(command, rows(points));
    }

    static List<Map<String, Object>> rows(List<BandwidthPoint> points) {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (BandwidthPoint p : points) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("test", p.test());
            row.put("shaper", p.shaper());
            row.put("direction", p.direction());
            row.put("limit_mbit", p.limitBitsPerSecond() == 0 ? null : p.limitBitsPerSecond() / 1e6);
            row.put("streams", p.streams());
            row.put("achieved_mbit", p.ok() ? p.achievedBitsPerSecond() / 1e6 : null);
            row.put("rr_p50_us", p.latency() == null ? null : p.latency().p50());
            row.put("rr_p99_us", p.latency() == null ? null : p.latency().p99());
            row.put("rr_p999_us", p.latency() == null ? null : p.latency().p999());
            row.put("retransmits", p.ok() ? p.retransmits() : null);
            if (!p.ok()) {
                row.put("error", p.error());
            }
            rows.add(row);
        }
        return rows;
    }
}
