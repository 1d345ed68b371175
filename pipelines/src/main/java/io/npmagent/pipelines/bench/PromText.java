package io.npmagent.pipelines.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** What the pipelines read from the agent's metrics: samples of a metric, and quantiles of a histogram's growth. */
public final class PromText {
    private PromText() {}

    /** Every sample of {@code name} (exactly that series name), by its label set as written ({@code {a="b"}} or ""). */
    public static Map<String, Double> samples(String text, String name) {
        Map<String, Double> out = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            if (line.startsWith("#") || !line.startsWith(name)) {
                continue;
            }
            String rest = line.substring(name.length());
            String labels = "";
            if (rest.startsWith("{")) {
                int end = rest.indexOf('}');
                labels = rest.substring(0, end + 1);
                rest = rest.substring(end + 1);
            } else if (!rest.startsWith(" ")) {
                continue; // another metric whose name starts with this one
            }
            String[] parts = rest.trim().split(" ");
            out.merge(labels, Double.parseDouble(parts[0]), Double::sum);
        }
        return out;
    }

    /** Every sample of {@code name} summed over its labels (0 when there is none). */
    public static double total(String text, String name) {
        return samples(text, name).values().stream().mapToDouble(Double::doubleValue).sum();
    }

    /** The samples of {@code name} whose label set passes {@code which}, summed. */
    public static double total(String text, String name, java.util.function.Predicate<String> which) {
        return samples(text, name).entrySet().stream().filter(e -> which.test(e.getKey())).mapToDouble(Map.Entry::getValue).sum();
    }

    /** A histogram's buckets summed over its other labels: upper bound → cumulative count. */
    public static TreeMap<Double, Double> buckets(String text, String histogram) {
        return buckets(text, histogram, labels -> true);
    }

    /** A histogram's buckets summed over the series whose label set ({@code {a="b",...}}) passes {@code which}. */
    public static TreeMap<Double, Double> buckets(String text, String histogram, java.util.function.Predicate<String> which) {
        TreeMap<Double, Double> out = new TreeMap<>();
        samples(text, histogram + "_bucket").forEach((labels, count) -> {
            if (!which.test(labels)) {
                return;
            }
            int at = labels.indexOf("le=\"");
            String le = labels.substring(at + 4, labels.indexOf('"', at + 4));
            out.merge(le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le), count, Double::sum);
        });
        return out;
    }

    /** The observations between two scrapes, as buckets. */
    public static TreeMap<Double, Double> growth(TreeMap<Double, Double> before, TreeMap<Double, Double> after) {
        TreeMap<Double, Double> out = new TreeMap<>();
        after.forEach((le, n) -> out.put(le, n - before.getOrDefault(le, 0.0)));
        return out;
    }

    /** {@code q} of the observations, as Prometheus' histogram_quantile estimates it (linear within a bucket). */
    public static double quantile(TreeMap<Double, Double> buckets, double q) {
        if (buckets.isEmpty()) {
            return Double.NaN;
        }
        double total = buckets.lastEntry().getValue();
        if (total <= 0) {
            return Double.NaN;
        }
        double rank = q * total;
        double lowerBound = 0;
        double lowerCount = 0;
        List<Map.Entry<Double, Double>> entries = new ArrayList<>(buckets.entrySet());
        for (Map.Entry<Double, Double> e : entries) {
            if (e.getValue() >= rank) {
                if (e.getKey().isInfinite()) {
                    return lowerBound;
                }
                double inBucket = e.getValue() - lowerCount;
                return inBucket <= 0 ? e.getKey() : lowerBound + (e.getKey() - lowerBound) * (rank - lowerCount) / inBucket;
            }
            lowerBound = e.getKey();
            lowerCount = e.getValue();
        }
        return lowerBound;
    }
}
