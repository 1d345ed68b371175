package io.npmagent.pipelines.informers;

import com.google.gson.Gson;
import com.google.gson.reflect.TypeToken;
import io.npmagent.pipelines.bench.BenchApiServer;
import io.npmagent.pipelines.bench.TempDir;
import io.npmagent.pipelines.bench.BenchCluster;
import io.npmagent.pipelines.bench.BenchJson;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code pipelines/informers}: what the agent's informer caches cost per pod and how long a node takes
 * from start to its first full apply, at cluster sizes given, against a real kube-apiserver. Each
 * size is listed twice, each time by a JVM of its own: by the agent's source (slimmed and paged caches,
 * then compiler, queue and backend as at boot), and by client-java's informers as its examples set them
 * up, the baseline for the cache's size. Prints a table; figures, not assertions.
 */
@Command(name = "informers", mixinStandardHelpOptions = true,
        description = "Informer cache memory per pod and time to first full apply, against a real kube-apiserver.")
public final class InformerBenchMain implements Callable<Integer> {
    @Option(names = "--pods", split = ",", defaultValue = "10000,100000", paramLabel = "N,...",
            description = "Cluster sizes in pods (default: ${DEFAULT-VALUE}).")
    List<Integer> sizes;

    @Option(names = "--policies", defaultValue = "1000", paramLabel = "N", description = "NetworkPolicies (default: ${DEFAULT-VALUE}).")
    int policies;

    @Option(names = "--json", paramLabel = "FILE", description = "Also write the figures here.")
    Path json;

    private final PrintStream out = System.out;

    public static void main(String[] args) {
        System.exit(new CommandLine(new InformerBenchMain()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        String command = "pipelines/informers --pods " + sizes.stream().map(String::valueOf).reduce((a, b) -> a + "," + b).orElse("")
                + " --policies " + policies;
        out.println("# reproduce: " + command);
        out.printf(Locale.ROOT, "# %d cores; each measurement in a JVM of its own (default heap settings); the backend is the in-memory one%n",
                Runtime.getRuntime().availableProcessors());
        List<Map<String, Object>> results = new ArrayList<>();
        for (int pods : sizes) {
            try (TempDir tmp = TempDir.create("npm-informers-"); BenchApiServer api = BenchApiServer.start(tmp.path().resolve("cluster"))) {
                Path dir = tmp.path();
                long t = System.nanoTime();
                out.printf(Locale.ROOT, "creating %,d pods in %,d namespaces and %,d policies through kube-apiserver %s...%n", pods,
                        BenchCluster.namespaces(pods), policies, api.controlPlane().version());
                BenchCluster.write(api, pods, policies);
                out.printf(Locale.ROOT, "  created in %.1f s; kube-apiserver RSS %d MiB, etcd RSS %d MiB%n", (System.nanoTime() - t) / 1e9,
                        api.rss("kube-apiserver") >> 20, api.rss("etcd") >> 20);
                Path kubeconfig = Files.writeString(dir.resolve("agent.kubeconfig"), api.agentKubeconfig());
                String url = kubeconfig.toString();
                for (String mode : List.of("plain", "agent")) {
                    out.printf(Locale.ROOT, "listing with %s informers...%n", mode.equals("plain") ? "client-java's plain" : "the agent's");
                    Map<String, Object> r = child(url, mode, pods);
                    r.put("policies_in_cluster", policies);
                    results.add(r);
                    out.println("  " + r);
                }
            }
        }
        out.println();
        out.print(table(results));
        if (json != null) {
            Files.writeString(json, BenchJson.document(command, results));
            out.println("wrote " + json);
        }
        return 0;
    }

    private static Map<String, Object> child(String url, String mode, int pods) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), InformerBenchChild.class.getName(), url, mode,
                Integer.toString(pods)).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String result = null;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                if (line.startsWith("RESULT ")) {
                    result = line.substring("RESULT ".length());
                }
            }
        }
        if (p.waitFor() != 0 || result == null) {
            throw new IllegalStateException("the " + mode + " measurement at " + pods + " pods failed (exit " + p.exitValue() + ")");
        }
        return new Gson().fromJson(result, new TypeToken<LinkedHashMap<String, Object>>() {}.getType());
    }

    /**
     * A row per size and informers: list time, then the agent's compile and apply of the first batch on its
     * own; heap per pod in the caches (the agent's hold the model's pods: {@code CachedPod}), in the rest of
     * the agent (the compiler's indexes, the desired state, the in-memory backend), and in all.
     */
    static String table(List<Map<String, Object>> results) {
        StringBuilder t = new StringBuilder();
        t.append(String.format(Locale.ROOT, "%-8s %9s %10s %16s %12s %12s %12s %12s %10s%n", "informers", "pods", "synced s", "compile+apply s",
                "cache B/pod", "agent B/pod", "total B/pod", "heap MiB", "RSS MiB"));
        for (Map<String, Object> r : results) {
            double pods = ((Number) r.get("pods")).doubleValue();
            double cache = ((Number) r.get("cache_heap_bytes")).doubleValue();
            Number total = (Number) r.get("total_heap_bytes");
            Number apply = (Number) r.get("compile_and_apply_seconds");
            t.append(String.format(Locale.ROOT, "%-8s %,9.0f %10.2f %16s %,12.0f %12s %12s %12.0f %10.0f%n", r.get("mode"), pods,
                    ((Number) r.get("synced_seconds")).doubleValue(), apply == null ? "-" : String.format(Locale.ROOT, "%.2f", apply.doubleValue()),
                    cache / pods, total == null ? "-" : String.format(Locale.ROOT, "%,.0f", (total.doubleValue() - cache) / pods),
                    total == null ? "-" : String.format(Locale.ROOT, "%,.0f", total.doubleValue() / pods),
                    (total == null ? cache : total.doubleValue()) / (1 << 20), ((Number) r.get("rss_bytes")).doubleValue() / (1 << 20)));
        }
        return t.toString();
    }
}
