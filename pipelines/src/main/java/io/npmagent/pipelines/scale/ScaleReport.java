package io.npmagent.pipelines.scale;

import io.npmagent.pipelines.bench.BenchJson;
import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The scale run's report, in one folder: {@code scale.json} (the issue's fields, the agent's own
 * figures and every probe sample), {@code scale.md} (a row per run, then each mode's runs side by side), {@code latency-vs-scale.png} (p99 event → enforced by packets
 * against the pods in the cluster, per backend and mode) and {@code latency-distribution-SCENARIO.png}
 * (each run's probe latencies, as a cumulative distribution).
 */
final class ScaleReport {
    private ScaleReport() {}

    static List<Path> write(Path dir, String command, List<AgentScaleResult> results) throws IOException {
        System.setProperty("java.awt.headless", "true");
        Files.createDirectories(dir);
        List<Path> written = new ArrayList<>();
        Path json = dir.resolve("scale.json");
        Files.writeString(json, BenchJson.document(command, results.stream().map(AgentScaleResult::json).toList()));
        written.add(json);
        Path md = dir.resolve("scale.md");
        Files.writeString(md, "# reproduce: " + command + "\n\n" + markdown(results));
        written.add(md);
        written.add(latencyVsScale(dir, results));
        Map<String, List<AgentScaleResult>> byScenario = new LinkedHashMap<>();
        results.forEach(r -> byScenario.computeIfAbsent(r.scenario(), k -> new ArrayList<>()).add(r));
        for (Map.Entry<String, List<AgentScaleResult>> e : byScenario.entrySet()) {
            written.add(distribution(dir, e.getKey(), e.getValue()));
        }
        return written;
    }

    /** The runs, one row each, then the side-by-side summary: per scenario, backend and queue mode, the spread over repeats. */
    static String markdown(List<AgentScaleResult> results) {
        StringBuilder t = new StringBuilder();
        t.append("| scenario | backend | queue | run | pods | policies | first apply s | list s | compile+apply s | npm640 total s (API + tail) | flips | p50 s | p90 s | p99 s | max s "
                + "| agent p50 s | agent p99 s | write p99 s | batches/s | writes/s | heap MiB | RSS MiB | CPU s | events | result |\n");
        t.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (AgentScaleResult r : results) {
            AgentScaleResult.Latency l = r.probes();
            String result = r.failure() != null ? "**" + r.failure().lines().findFirst().orElse("failed") + "**"
                    : r.shortfall() != null ? "ok, " + r.shortfall() : "ok";
            t.append(String.format(Locale.ROOT, "| %s | %s | %s | %d | %,d | %,d | %s | %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %s |%n",
                    r.scenario(), r.backend(), r.mode(), r.run(), r.pods(), r.policies(), f(r.boot().firstApplySeconds(), 2), f(r.boot().listSeconds(), 2),
                    f(r.boot().compileAndApplySeconds(), 2), npm640(r.npm640()),
                    l.count(), f(l.p50(), 3), f(l.p90(), 3), f(l.p99(), 3), f(l.max(), 3), f(r.agentP50Seconds(), 3), f(r.agentP99Seconds(), 3),
                    f(r.writeP99Seconds(), 3), f(r.batchesPerSecond(), 1), f(r.writesPerSecond(), 1),
                    r.heapBytes() == 0 ? "-" : Long.toString(r.heapBytes() >> 20), r.rssBytes() == 0 ? "-" : Long.toString(r.rssBytes() >> 20),
                    f(r.cpuSeconds(), 1), r.events(), result));
        }
        t.append("\n").append(summary(results));
        return t.toString();
    }

    /**
     * Side by side: for each scenario and backend, each queue mode's runs: the p99 of each run, their
     * spread (lowest to highest), the p50 and p99 over every flip of every run, and the medians of the
     * rest. A mode with a failed run says so.
     */
    static String summary(List<AgentScaleResult> results) {
        Map<String, List<AgentScaleResult>> groups = new LinkedHashMap<>();
        results.forEach(r -> groups.computeIfAbsent(r.scenario() + "\u0000" + r.backend() + "\u0000" + r.mode(), k -> new ArrayList<>()).add(r));
        StringBuilder t = new StringBuilder();
        t.append("| scenario | backend | queue | runs | flips | p99 s of each run | p99 spread s | p50 s, all flips | p99 s, all flips "
                + "| npm640 total s (median) | npm640 tail s (median) | batches/s (median) | writes/s (median) | heap MiB (max) | failed runs |\n");
        t.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (List<AgentScaleResult> g : groups.values()) {
            AgentScaleResult first = g.get(0);
            List<AgentScaleResult> ok = g.stream().filter(r -> r.failure() == null).toList();
            AgentScaleResult.Latency all = AgentScaleResult.Latency.pooled(ok);
            List<Double> p99s = ok.stream().map(r -> r.probes().p99()).toList();
            double low = p99s.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
            double high = p99s.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
            t.append(String.format(Locale.ROOT, "| %s | %s | %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d |%n",
                    first.scenario(), first.backend(), first.mode(), g.size(), all.count(),
                    String.join(", ", p99s.stream().map(v -> f(v, 3)).toList()), ok.isEmpty() ? "-" : f(low, 3) + "-" + f(high, 3),
                    f(all.p50(), 3), f(all.p99(), 3), f(median(ok, r -> r.npm640().totalSeconds()), 3), f(median(ok, r -> r.npm640().tailSeconds()), 3),
                    f(median(ok, AgentScaleResult::batchesPerSecond), 1), f(median(ok, AgentScaleResult::writesPerSecond), 1),
                    ok.isEmpty() ? "-" : Long.toString(ok.stream().mapToLong(AgentScaleResult::heapBytes).max().orElse(0) >> 20),
                    g.size() - ok.size()));
        }
        return t.toString();
    }

    private static String npm640(AgentScaleResult.Npm640Time n) {
        return Double.isNaN(n.totalSeconds()) ? "-" : f(n.totalSeconds(), 3) + " (" + f(n.createdSeconds(), 3) + " + " + f(n.tailSeconds(), 3) + ")";
    }

    private static double median(List<AgentScaleResult> runs, java.util.function.ToDoubleFunction<AgentScaleResult> figure) {
        double[] v = runs.stream().mapToDouble(figure).filter(d -> !Double.isNaN(d)).sorted().toArray();
        return v.length == 0 ? Double.NaN : v[(v.length - 1) / 2];
    }

    private static String f(double v, int digits) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%." + digits + "f", v);
    }

    private static Path latencyVsScale(Path dir, List<AgentScaleResult> results) throws IOException {
        Map<String, XYSeries> series = new LinkedHashMap<>();
        for (AgentScaleResult r : results) {
            if (r.failure() != null) {
                continue;
            }
            String key = r.backend() + " (" + r.mode() + ")";
            series.computeIfAbsent(key, k -> new XYSeries(k, true, true)).add(r.pods(), r.probes().p99() * 1000);
        }
        XYSeriesCollection data = new XYSeriesCollection();
        series.values().forEach(data::addSeries);
        JFreeChart chart = ChartFactory.createXYLineChart("p99 event \u2192 enforced (packets) against cluster size", "pods in the cluster",
                "p99 milliseconds", data, PlotOrientation.VERTICAL, true, false, false);
        XYPlot plot = chart.getXYPlot();
        LogAxis x = new LogAxis("pods in the cluster (log)");
        x.setSmallestValue(100);
        x.setTickUnit(new NumberTickUnit(1), false, false); // a tick a decade, labelled 1,000 not 10^3
        x.setAutoTickUnitSelection(false);
        x.setNumberFormatOverride(new DecimalFormat("#,##0"));
        plot.setDomainAxis(x);
        style(plot, data.getSeriesCount());
        Path png = dir.resolve("latency-vs-scale.png");
        ChartUtils.saveChartAsPNG(png.toFile(), chart, 1000, 600);
        return png;
    }

    private static Path distribution(Path dir, String scenario, List<AgentScaleResult> results) throws IOException {
        XYSeriesCollection data = new XYSeriesCollection();
        for (AgentScaleResult r : results) {
            if (r.probes().count() == 0) {
                continue;
            }
            List<Double> sorted = new ArrayList<>(r.probes().samples());
            sorted.sort(null);
            XYSeries s = new XYSeries(r.backend() + " (" + r.mode() + ") #" + r.run(), true, true);
            for (int i = 0; i < sorted.size(); i++) {
                s.add(sorted.get(i) * 1000, 100.0 * (i + 1) / sorted.size());
            }
            data.addSeries(s);
        }
        JFreeChart chart = ChartFactory.createXYLineChart("event \u2192 enforced, by packets: " + scenario, "milliseconds",
                "% of flips enforced within", data, PlotOrientation.VERTICAL, true, false, false);
        style(chart.getXYPlot(), data.getSeriesCount());
        chart.getXYPlot().getRangeAxis().setRange(0, 100);
        Path png = dir.resolve("latency-distribution-" + scenario + ".png");
        ChartUtils.saveChartAsPNG(png.toFile(), chart, 1000, 600);
        return png;
    }

    private static void style(XYPlot plot, int count) {
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
        for (int i = 0; i < count; i++) {
            renderer.setSeriesStroke(i, new BasicStroke(2f));
        }
        plot.setRenderer(renderer);
    }
}
