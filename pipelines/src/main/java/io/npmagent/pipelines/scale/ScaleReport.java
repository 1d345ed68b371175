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
 * The scale run's report, in one folder: {@code scale.json} (the fields and the agent's own
 * figures), {@code scale.md} (the table), {@code latency-vs-scale.png} (p99 event → enforced by packets
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

    static String markdown(List<AgentScaleResult> results) {
        StringBuilder t = new StringBuilder();
        t.append("| scenario | backend | background | pods | policies | first apply s | p50 s | p99 s | max s | agent p50 s | agent p99 s "
                + "| write p99 s | heap MiB | RSS MiB | CPU s | events | result |\n");
        t.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (AgentScaleResult r : results) {
            t.append(String.format(Locale.ROOT, "| %s | %s | %s | %,d | %,d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %s |%n",
                    r.scenario(), r.backend(), r.background() ? "on" : "off", r.pods(), r.policies(), f(r.firstApplySeconds(), 2),
                    f(r.p50Seconds(), 3), f(r.p99Seconds(), 3), f(r.maxSeconds(), 3), f(r.agentP50Seconds(), 3), f(r.agentP99Seconds(), 3),
                    f(r.writeP99Seconds(), 3), r.heapBytes() == 0 ? "-" : Long.toString(r.heapBytes() >> 20),
                    r.rssBytes() == 0 ? "-" : Long.toString(r.rssBytes() >> 20), f(r.cpuSeconds(), 1), r.events(),
                    r.failure() == null ? "ok" : "**" + r.failure().lines().findFirst().orElse("failed") + "**"));
        }
        return t.toString();
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
            String key = r.backend() + (r.background() ? " (background)" : " (foreground)");
            series.computeIfAbsent(key, k -> new XYSeries(k, true, true)).add(r.pods(), r.p99Seconds() * 1000);
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
            if (r.probeSeconds().isEmpty()) {
                continue;
            }
            List<Double> sorted = new ArrayList<>(r.probeSeconds());
            sorted.sort(null);
            XYSeries s = new XYSeries(r.backend() + (r.background() ? " (background)" : " (foreground)"), true, true);
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
