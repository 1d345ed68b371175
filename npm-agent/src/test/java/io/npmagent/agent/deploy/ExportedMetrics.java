package io.npmagent.agent.deploy;

import io.npmagent.dataplane.metrics.Metrics;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.SummarySnapshot;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The series names the agent's {@code /metrics} can carry: each metric family its registry holds (as
 * {@code new Metrics(registry)} registers them), with the names its samples take in Prometheus' text
 * format (a histogram's {@code _bucket}, {@code _sum} and {@code _count}; a counter's {@code _total}; a
 * gauge's own name). Read from the registry's snapshots rather than from its text output, which leaves
 * out a labelled family until it has a sample.
 */
public final class ExportedMetrics {
    private ExportedMetrics() {}

    /** Family name to its type ("histogram", "counter", "gauge", ...), as the agent's registry holds them. */
    public static Map<String, String> families() {
        PrometheusRegistry registry = new PrometheusRegistry();
        new Metrics(registry);
        Map<String, String> families = new TreeMap<>();
        for (MetricSnapshot m : registry.scrape()) {
            String name = m.getMetadata().getPrometheusName();
            String type;
            if (m instanceof HistogramSnapshot) {
                type = "histogram";
            } else if (m instanceof CounterSnapshot) {
                type = "counter";
            } else if (m instanceof GaugeSnapshot) {
                type = "gauge";
            } else if (m instanceof SummarySnapshot) {
                type = "summary";
            } else {
                type = m.getClass().getSimpleName();
            }
            if (families.put(name, type) != null) {
                throw new IllegalStateException("two metric families named " + name);
            }
        }
        return families;
    }

    /** The names of the samples the registry writes in Prometheus' text format now (families with samples only). */
    public static TreeSet<String> sampleNamesWritten(PrometheusRegistry registry) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            PrometheusTextFormatWriter.create().write(out, registry.scrape());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        TreeSet<String> names = new TreeSet<>();
        for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
            if (!line.isBlank() && !line.startsWith("#")) {
                names.add(line.split("[{ ]", 2)[0]);
            }
        }
        return names;
    }

    /** Every series name a query may select. */
    public static TreeSet<String> seriesNames() {
        TreeSet<String> names = new TreeSet<>();
        families().forEach((family, type) -> {
            switch (type) {
                case "histogram" -> {
                    names.add(family + "_bucket");
                    names.add(family + "_sum");
                    names.add(family + "_count");
                }
                case "summary" -> {
                    names.add(family);
                    names.add(family + "_sum");
                    names.add(family + "_count");
                }
                case "counter" -> names.add((family.endsWith("_total") ? family.substring(0, family.length() - 6) : family) + "_total");
                case "gauge", "untyped", "unknown" -> names.add(family);
                default -> throw new IllegalStateException("a metric family of a type these checks do not know: " + family + " " + type);
            }
        });
        return names;
    }

    /** The histogram families (their names without a suffix). */
    public static TreeSet<String> histograms() {
        TreeSet<String> names = new TreeSet<>();
        families().forEach((family, type) -> {
            if (type.equals("histogram")) {
                names.add(family);
            }
        });
        return names;
    }
}
