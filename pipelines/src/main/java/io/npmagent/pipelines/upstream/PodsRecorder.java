package io.npmagent.pipelines.upstream;

import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.harness.cluster.Cluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Where each of a suite's pods ran: namespace, pod, node, addresses, one line a pod. A run's namespaces
 * are gone once it ends, so the cluster's pods are listed every few seconds while it runs; a pod is
 * recorded the first time it is seen with an address. {@code kube-system} is not the suite's.
 */
final class PodsRecorder implements AutoCloseable {
    private final Cluster cluster;
    private final Path file;
    private final Map<String, String> seen = new TreeMap<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "pods-recorder");
        t.setDaemon(true);
        return t;
    });

    PodsRecorder(Cluster cluster, Path file) {
        this.cluster = cluster;
        this.file = file;
        timer.scheduleWithFixedDelay(this::look, 0, 5, TimeUnit.SECONDS);
    }

    private void look() {
        CommandResult r = cluster.kubectlRun("get", "pods", "-A", "-o",
                "jsonpath={range .items[*]}{.metadata.namespace} {.metadata.name} {.spec.nodeName} {.status.podIPs[*].ip}{\"\\n\"}{end}");
        if (r.ok()) {
            synchronized (seen) {
                r.stdout().lines().forEach(line -> {
                    String[] f = line.strip().split("\\s+");
                    if (f.length >= 4 && !f[0].equals("kube-system")) {
                        seen.putIfAbsent(f[0] + " " + f[1], line.strip());
                    }
                });
            }
        }
    }

    /** Stops listing, writes the file, and returns how many pods ran on each node ({@code node count, ...}). */
    @Override
    public void close() throws IOException {
        timer.shutdownNow();
        try {
            timer.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<String> lines;
        synchronized (seen) {
            lines = new ArrayList<>(seen.values());
        }
        Files.write(file, lines);
        Map<String, Integer> perNode = new TreeMap<>();
        lines.forEach(l -> perNode.merge(l.split("\\s+")[2], 1, Integer::sum));
        System.out.println("upstream-suites: pods on " + String.join(", ", perNode.entrySet().stream().map(e -> e.getKey() + " " + e.getValue()).toList()));
    }
}
