package io.npmagent.pipelines.scale;

import io.npmagent.harness.process.Await;
import io.npmagent.harness.process.Daemon;
import io.npmagent.harness.process.Logs;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.npmagent.pipelines.bench.ProcFiles;
import io.npmagent.pipelines.bench.PromText;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Map;

/**
 * {@code npm-agent run} as a process of its own, as a DaemonSet runs it: against the API server through a
 * kubeconfig, with a configuration file, on the run's node namespace and bpffs. What the scale run reads
 * of it: its endpoints (/readyz, /metrics, /debug/state) and, from /proc, its memory and CPU.
 */
public final class AgentProcess implements AutoCloseable {
    private final Daemon process;
    private final int port;
    private final int debugPort;
    private final Path log;
    private final HttpClient http = HttpClient.newHttpClient();

    /**
     * The DaemonSet's JVM (npm-agent/deploy/daemonset.yaml), whatever the cluster's size: its
     * JAVA_TOOL_OPTIONS' heap share and collector, sized by its memory limit as a container's limit
     * sizes the JVM ({@code -XX:MaxRAM}). {@code AgentProcessTest} holds this to the manifest.
     */
    public static final List<String> DAEMONSET_JVM = List.of("-XX:MaxRAM=768m", "-XX:MaxRAMPercentage=60", "-XX:+UseG1GC");

    /**
     * @param logs           where the agent's log and its GC log go ({@code PREFIX.log}, {@code PREFIX.gc.log})
     * @param kubeconfigText how the agent reaches the API server
     * @param queueSettings  the configuration file's batching keys, as JSON members ({@link QueueMode#settings})
     */
    public AgentProcess(Path dir, Path logs, String prefix, String kubeconfigText, String node, String netns, Path bpffs, String backend, String queueSettings,
            List<String> jvm)
            throws IOException {
        this.port = freePort();
        this.debugPort = freePort();
        Files.createDirectories(logs);
        this.log = logs.resolve(prefix + ".log");
        Files.deleteIfExists(log);
        Path kubeconfig = dir.resolve("kubeconfig");
        Files.writeString(kubeconfig, kubeconfigText);
        Path config = dir.resolve("npm-agent.json");
        Files.writeString(config, "{" + queueSettings + ", \"ListeningAddress\": \"127.0.0.1\", \"ListeningPort\": " + port
                + ", \"DebugListeningPort\": " + debugPort + ", \"LogLevel\": \"warning\"}\n");
        String java = ProcessHandle.current().info().command().orElse("java");
        // The DaemonSet's heap and collector, with the GC log kept beside the agent's.
        List<String> command = new ArrayList<>(List.of(java));
        command.addAll(jvm);
        command.addAll(List.of("-Xlog:gc:file=" + logs.resolve(prefix + ".gc.log"),
                "-cp", System.getProperty("java.class.path"), "io.npmagent.agent.cli.Main", "run", "--kubeconfig", kubeconfig.toString(),
                "--config", config.toString(), "--backend", backend, "--netns", netns,
                "--bpffs", bpffs.toString(), "--poll-ms", "20"));
        this.process = Daemon.of("npm-agent run", log, command).env("NODE_NAME", node).start();
    }

    public long pid() {
        return process.pid();
    }

    public boolean alive() {
        return process.alive();
    }

    /** The last lines the agent wrote, for an error message. */
    public String logTail() {
        return Logs.tail(log, 30);
    }

    public boolean ready() {
        return status("/readyz", port) == 200;
    }

    /** /debug/state as JSON, or null while the agent does not answer. */
    JsonObject state() {
        String body = body("/debug/state", debugPort);
        return body == null ? null : JsonParser.parseString(body).getAsJsonObject();
    }

    /** /metrics as Prometheus text, or "" while the agent does not answer. */
    public String metrics() {
        String body = body("/metrics", port);
        return body == null ? "" : body;
    }

    /** Asks the JVM for a full collection (jcmd), then reads the heap in use from its metrics: what stays reachable. */
    public long heapAfterGc() throws IOException, InterruptedException {
        Process gc = new ProcessBuilder(jcmd().toString(), Long.toString(process.pid()), "GC.run")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        gc.waitFor();
        Thread.sleep(200);
        double heap = 0;
        for (Map.Entry<String, Double> e : PromText.samples(metrics(), "jvm_memory_used_bytes").entrySet()) {
            if (e.getKey().contains("area=\"heap\"")) {
                heap += e.getValue();
            }
        }
        return (long) heap;
    }

    /** Writes the JVM's class histogram (jcmd GC.class_histogram: instances and bytes per class, after a full collection) to {@code file}. */
    public void classHistogram(Path file) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(jcmd().toString(), Long.toString(process.pid()), "GC.class_histogram")
                .redirectErrorStream(true).redirectOutput(file.toFile()).start();
        p.waitFor();
    }

    private static Path jcmd() {
        return Path.of(ProcessHandle.current().info().command().orElse("java")).resolveSibling("jcmd");
    }

    long rssBytes() throws IOException {
        return ProcFiles.statusBytes(process.pid(), "VmRSS:");
    }

    /** User and system CPU time of the agent so far. */
    double cpuSeconds() throws IOException {
        return ProcFiles.cpuSeconds(process.pid());
    }

    private int status(String path, int onPort) {
        try {
            return http.send(request(path, onPort), HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        }
    }

    private String body(String path, int onPort) {
        try {
            HttpResponse<String> r = http.send(request(path, onPort), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? r.body() : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private static HttpRequest request(String path, int onPort) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + onPort + path)).timeout(Duration.ofSeconds(10)).build();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** SIGTERM, as the kubelet stops it; SIGKILL if it has not stopped in 30 s. */
    @Override
    public void close() {
        process.stop(Duration.ofSeconds(30));
    }

    /** Waits until {@code check} holds, failing loudly if the agent dies or {@code limit} passes; looks every 20 ms (it times convergence). */
    public void await(java.util.function.BooleanSupplier check, Duration limit, String what) {
        Await.value(limit, Duration.ofMillis(20), what, () -> {
            if (!alive()) {
                throw new Await.Abort("the agent exited while waiting for " + what + ":\n" + logTail());
            }
            return check.getAsBoolean() ? Optional.of(true) : Optional.empty();
        }, this::logTail);
    }
}
