package io.npmagent.pipelines.bandwidth;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The protection and start tables (issue #20's figures), as text and as JSON rows beside the other tests'. */
final class FlowTables {
    private FlowTables() {}

    static String protection(List<ProtectionRun.Point> points) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "%-10s %-14s %5s %10s %8s %11s %11s %9s %11s %8s %8s %9s%n", "limit", "flow control", "bulk",
                "aggregate", "drops %", "small p90us", "small p99us", "small rtx", "bulk p99 ms", "held", "slowed", "protected"));
        for (ProtectionRun.Point p : points) {
            if (!p.ok()) {
                out.append(String.format(Locale.ROOT, "%-10s %-14s %5d  FAILED: %s%n", mbit(p.limitBits()), p.flowControl(), p.bulkFlows(), p.error()));
                continue;
            }
            out.append(String.format(Locale.ROOT, "%-10s %-14s %5d %10s %8.2f %11.0f %11.0f %9d %11.1f %8d %8d %9d%n", mbit(p.limitBits()),
                    p.flowControl(), p.bulkFlows(), mbit((long) p.aggregateBits()), p.counters().dropPercent(), p.small().p90(), p.small().p99(),
                    p.small().retransmits(), p.bulkP99Us() / 1e3, p.counters().held(), p.counters().slowed(), p.counters().protectedPackets()));
        }
        return out.toString();
    }

    static String start(List<StartRun.Point> points) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "%-10s %-32s %14s %14s %9s %12s %11s %8s %8s%n", "limit", "shaper", "1st s over KB",
                "first " + StartRun.FIRST_SECONDS + " s", "vs limit", "goodput", "retransmits", "drops", "held"));
        for (StartRun.Point p : points) {
            if (!p.ok()) {
                out.append(String.format(Locale.ROOT, "%-10s %-32s  FAILED: %s%n", mbit(p.limitBits()), p.shaper(), p.error()));
                continue;
            }
            out.append(String.format(Locale.ROOT, "%-10s %-32s %14.0f %14s %+8.1f%% %12s %11d %8d %8d%n", mbit(p.limitBits()), p.shaper(),
                    p.firstSecondExcessBytes() / 1e3, mbit((long) p.firstSecondsBits()), 100 * (p.firstSecondsBits() / p.limitBits() - 1),
                    mbit((long) p.goodputBits()), p.retransmits(), p.counters().horizonDrops(), p.counters().held()));
        }
        return out.toString();
    }

    static List<Map<String, Object>> json(List<ProtectionRun.Point> protection, List<StartRun.Point> start) {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (ProtectionRun.Point p : protection) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("test", "protection");
            row.put("limit_mbit", p.limitBits() / 1e6);
            row.put("flow_control", p.flowControl());
            row.put("bulk_flows", p.bulkFlows());
            if (p.ok()) {
                row.put("aggregate_mbit", p.aggregateBits() / 1e6);
                row.put("horizon_drop_percent", p.counters().dropPercent());
                row.put("small_p90_us", p.small().p90());
                row.put("small_p99_us", p.small().p99());
                row.put("small_retransmits", p.small().retransmits());
                row.put("bulk_p99_us", p.bulkP99Us());
                counters(row, p.counters());
            } else {
                row.put("error", p.error());
            }
            rows.add(row);
        }
        for (StartRun.Point p : start) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("test", "start");
            row.put("limit_mbit", p.limitBits() / 1e6);
            row.put("shaper", p.shaper());
            if (p.ok()) {
                row.put("first_second_excess_bytes", p.firstSecondExcessBytes());
                row.put("first_" + StartRun.FIRST_SECONDS + "s_mbit", p.firstSecondsBits() / 1e6);
                row.put("goodput_mbit", p.goodputBits() / 1e6);
                row.put("retransmits", p.retransmits());
                counters(row, p.counters());
            } else {
                row.put("error", p.error());
            }
            rows.add(row);
        }
        return rows;
    }

    private static void counters(Map<String, Object> row, EgressCounters c) {
        row.put("packets", c.packets());
        row.put("horizon_drops", c.horizonDrops());
        row.put("protected", c.protectedPackets());
        row.put("slowed", c.slowed());
        row.put("held", c.held());
    }

    private static String mbit(long bits) {
        return BandwidthTable.mbit(bits);
    }
}
