package io.npmagent.harness.monitoring;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The scrape job the Prometheus Operator makes of a PodMonitor, for a Prometheus that runs without the
 * operator: pod discovery in the monitor's namespaces; pods dropped once finished, kept by the selector's
 * labels and by the endpoint's port name; the operator's target labels (namespace, container, pod, job from
 * the monitor or its {@code jobLabel}, endpoint); then the endpoint's own relabelings, its path and interval.
 * Rule for rule what the operator's {@code generatePodMonitorConfig} writes for the fields the shipped
 * PodMonitor uses; a field it does not use is refused here rather than silently dropped, so the two cannot
 * drift apart unnoticed.
 */
public final class PodMonitorScrapeConfig {
    private static final List<String> SPEC_FIELDS = List.of("jobLabel", "namespaceSelector", "selector", "podMetricsEndpoints");
    private static final List<String> ENDPOINT_FIELDS = List.of("port", "path", "interval", "relabelings");
    private static final List<String> RELABEL_FIELDS = List.of("sourceLabels", "targetLabel", "regex", "replacement", "action", "separator");

    private PodMonitorScrapeConfig() {}

    /** The scrape configs (one per endpoint) of {@code podMonitor}, discovering pods through {@code kubeconfig}. */
    public static List<Map<String, Object>> of(Map<String, Object> podMonitor, String kubeconfig) {
        Map<String, Object> meta = map(podMonitor, "metadata");
        String monitor = meta.get("namespace") + "/" + meta.get("name");
        Map<String, Object> spec = map(podMonitor, "spec");
        only(spec, SPEC_FIELDS, monitor + " spec");
        List<String> namespaces = strings(map(spec, "namespaceSelector").get("matchNames"), monitor + " spec.namespaceSelector.matchNames");
        Map<String, Object> selector = map(spec, "selector");
        only(selector, List.of("matchLabels"), monitor + " spec.selector");
        Map<String, Object> matchLabels = new TreeMap<>(map(selector, "matchLabels")); // the operator sorts them
        List<Map<String, Object>> jobs = new ArrayList<>();
        List<Map<String, Object>> endpoints = maps(spec.get("podMetricsEndpoints"), monitor + " spec.podMetricsEndpoints");
        for (int i = 0; i < endpoints.size(); i++) {
            Map<String, Object> ep = endpoints.get(i);
            String where = monitor + " spec.podMetricsEndpoints[" + i + "]";
            only(ep, ENDPOINT_FIELDS, where);
            String port = require(ep, "port", where);
            List<Map<String, Object>> relabel = new ArrayList<>();
            relabel.add(rule(List.of("job"), "__tmp_prometheus_job_name", null, null, null));
            relabel.add(rule(List.of("__meta_kubernetes_pod_phase"), null, "(Failed|Succeeded)", null, "drop"));
            matchLabels.forEach((k, v) -> relabel.add(rule(List.of("__meta_kubernetes_pod_label_" + sanitize(k), "__meta_kubernetes_pod_labelpresent_" + sanitize(k)),
                    null, "(" + v + ");true", null, "keep")));
            relabel.add(rule(List.of("__meta_kubernetes_pod_container_port_name"), null, port, null, "keep"));
            relabel.add(rule(List.of("__meta_kubernetes_namespace"), "namespace", null, null, null));
            relabel.add(rule(List.of("__meta_kubernetes_pod_container_name"), "container", null, null, null));
            relabel.add(rule(List.of("__meta_kubernetes_pod_name"), "pod", null, null, null));
            relabel.add(rule(null, "job", null, monitor, null));
            if (spec.get("jobLabel") instanceof String jobLabel && !jobLabel.isEmpty()) {
                relabel.add(rule(List.of("__meta_kubernetes_pod_label_" + sanitize(jobLabel)), "job", "(.+)", "${1}", null));
            }
            relabel.add(rule(null, "endpoint", null, port, null));
            if (ep.get("relabelings") != null) {
                for (Map<String, Object> r : maps(ep.get("relabelings"), where + ".relabelings")) {
                    only(r, RELABEL_FIELDS, where + ".relabelings");
                    Map<String, Object> out = new LinkedHashMap<>();
                    r.forEach((k, v) -> out.put(snake(k), v));
                    relabel.add(out);
                }
            }
            Map<String, Object> job = new LinkedHashMap<>();
            job.put("job_name", "podMonitor/" + monitor + "/" + i);
            job.put("honor_labels", false);
            Map<String, Object> sd = new LinkedHashMap<>();
            sd.put("role", "pod");
            sd.put("kubeconfig_file", kubeconfig);
            sd.put("namespaces", Map.of("names", namespaces));
            job.put("kubernetes_sd_configs", List.of(sd));
            if (ep.get("interval") != null) {
                job.put("scrape_interval", ep.get("interval"));
            }
            if (ep.get("path") != null) {
                job.put("metrics_path", ep.get("path"));
            }
            job.put("relabel_configs", relabel);
            jobs.add(job);
        }
        return jobs;
    }

    /** Prometheus' meta label names: every character outside [a-zA-Z0-9_] becomes '_', as the operator's sanitizeLabelName does. */
    static String sanitize(String label) {
        return label.replaceAll("[^a-zA-Z0-9_]", "_");
    }

    private static String snake(String camel) {
        return camel.replaceAll("([a-z])([A-Z])", "$1_$2").toLowerCase(java.util.Locale.ROOT);
    }

    private static Map<String, Object> rule(List<String> sources, String target, String regex, String replacement, String action) {
        Map<String, Object> r = new LinkedHashMap<>();
        if (action != null) {
            r.put("action", action);
        }
        if (sources != null) {
            r.put("source_labels", sources);
        }
        if (target != null) {
            r.put("target_label", target);
        }
        if (regex != null) {
            r.put("regex", regex);
        }
        if (replacement != null) {
            r.put("replacement", replacement);
        }
        return r;
    }

    private static void only(Map<String, Object> m, List<String> known, String where) {
        for (String k : m.keySet()) {
            if (!known.contains(k)) {
                throw new IllegalArgumentException(where + "." + k + ": not translated here (only " + known + "); add it as the Prometheus Operator does");
            }
        }
    }

    private static String require(Map<String, Object> m, String key, String where) {
        if (!(m.get(key) instanceof String s) || s.isEmpty()) {
            throw new IllegalArgumentException(where + "." + key + ": required");
        }
        return s;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Map<String, Object> m, String key) {
        if (!(m.get(key) instanceof Map<?, ?> v)) {
            throw new IllegalArgumentException(key + ": expected a mapping");
        }
        return (Map<String, Object>) v;
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> maps(Object v, String where) {
        if (!(v instanceof List<?> l) || l.isEmpty() || !l.stream().allMatch(Map.class::isInstance)) {
            throw new IllegalArgumentException(where + ": expected a list of mappings");
        }
        return (List<Map<String, Object>>) v;
    }

    private static List<String> strings(Object v, String where) {
        if (!(v instanceof List<?> l) || l.isEmpty() || !l.stream().allMatch(String.class::isInstance)) {
            throw new IllegalArgumentException(where + ": expected a list of names");
        }
        return l.stream().map(String.class::cast).toList();
    }
}
