package io.npmagent.pipelines.bench;

import io.npmagent.harness.process.Daemon;
import io.npmagent.harness.process.Logs;
import io.npmagent.harness.cli.HarnessMain;
import io.npmagent.agent.cli.CliRun;
import io.npmagent.agent.run.AgentStatus;
import io.npmagent.agent.run.ManifestLoop;
import io.npmagent.harness.sandbox.Sandbox;
import io.npmagent.dataplane.exec.CommandResult;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * One sandbox for one benchmark point, driven through the sandbox's CLI like any other tool, plus the
 * processes the benchmark starts inside its pods. {@link #close()} stops those processes and runs
 * {@code sandbox down}; a JVM shutdown hook does the same on Ctrl-C, so an interrupted run leaves no
 * namespace, agent or server behind.
 */
public final class BenchSandbox implements AutoCloseable {
    /** Output readers block until their process ends: never on the common pool, which may have a single thread. */
    private static final ExecutorService READERS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "bench-process-output");
        t.setDaemon(true);
        return t;
    });

    private final String name;
    private final Thread hook = new Thread(this::close, "bench-sandbox-down");
    /** Every client started in the pods and not yet ended. */
    private final Set<Process> processes = new LinkedHashSet<>();
    /** The servers started in the pods, stopped by {@link #close()}. */
    private final List<Daemon> servers = new ArrayList<>();
    private boolean closed;

    private BenchSandbox(String name) {
        this.name = name;
    }

    /** Thrown when the sandbox cannot be brought up or its agent refused part of the directory. */
    public static final class UpFailed extends Exception {
        private static final long serialVersionUID = 1L;

        UpFailed(String message) {
            super(message);
        }
    }

    /**
     * {@code sandbox up}, which returns once the agent has applied the whole directory; then checks the
     * agent refused nothing, since a refused policy would be measured as missing.
     */
    public static BenchSandbox up(String name, Path manifests, String backend, int expectedPolicies, String... upOptions)
            throws IOException, UpFailed {
        BenchSandbox sandbox = new BenchSandbox(name);
        Runtime.getRuntime().addShutdownHook(sandbox.hook); // before up: Ctrl-C half-way must clean up too
        boolean ok = false;
        try {
            List<String> args = new ArrayList<>(List.of("sandbox", "up", "--name", name, "--manifests", manifests.toString(),
                    "--backend", backend, "--wait-seconds", "300"));
            args.addAll(List.of(upOptions));
            CliRun up = HarnessMain.run(args.toArray(String[]::new));
            if (up.exitCode() != 0) {
                throw new UpFailed("sandbox up: " + up.err().strip());
            }
            AgentStatus status = AgentStatus.read(Sandbox.named(name).dir());
            if (status == null || !status.failures().isEmpty() || !status.problems().isEmpty() || status.policies() != expectedPolicies) {
                throw new UpFailed("the agent did not apply all " + expectedPolicies + " policies: "
                        + (status == null ? "no status" : status.policies() + " applied, failures " + status.failures()
                                + ", problems " + status.problems()));
            }
            ok = true;
            return sandbox;
        } finally {
            if (!ok) {
                sandbox.close();
            }
        }
    }

    public String name() {
        return name;
    }

    /** The network namespace of {@code pod} ({@code namespace/name}), from the pods the sandbox built. */
    public String netns(String pod) throws IOException {
        return record(pod).netns();
    }

    private Sandbox.PodRecord record(String pod) throws IOException {
        return Sandbox.named(name).pods().stream().filter(p -> p.pod().equals(pod)).findFirst()
                .orElseThrow(() -> new IOException("sandbox " + name + " has no pod " + pod));
    }

    /** The sandbox agent's metrics as it last wrote them (every second), Prometheus text. */
    public String metrics() throws IOException {
        return Files.readString(Sandbox.named(name).dir().resolve(ManifestLoop.METRICS_FILE));
    }

    /**
     * Runs {@code argv} as one of {@code pod}'s processes (its network namespace and cgroup) to the end, or kills it after {@code timeout}.
     * Not through {@code ProcessRunner}: {@link #close()} must be able to stop a client that is running
     * when the JVM is told to stop.
     */
    public CommandResult run(String pod, List<String> argv, Duration timeout) throws IOException {
        Process p = start(pod, argv, false);
        CompletableFuture<String> out = read(p.getInputStream());
        CompletableFuture<String> err = read(p.getErrorStream());
        try {
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly().waitFor();
                return new CommandResult(argv, 124, out.getNow(""), "timed out after " + timeout.toSeconds() + " s");
            }
            return new CommandResult(argv, p.exitValue(), out.join(), err.join());
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } finally {
            forget(p);
        }
    }

    /**
     * Starts a client, {@code argv} in {@code pod}'s network namespace, remembered until it is forgotten or
     * the sandbox closes; with {@code mergeErrors}, its stderr comes on its stdout.
     */
    private synchronized Process start(String pod, List<String> argv, boolean mergeErrors) throws IOException {
        if (closed) {
            throw new IOException("sandbox " + name + " is closed");
        }
        List<String> full = record(pod).command(argv); // in the pod's network namespace and cgroup, as its own processes
        Process p = new ProcessBuilder(full).redirectErrorStream(mergeErrors)
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile())).start();
        processes.add(p);
        return p;
    }

    private synchronized void forget(Process p) {
        processes.remove(p);
    }

    private static CompletableFuture<String> read(InputStream in) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "";
            }
        }, READERS);
    }

    /**
     * Starts a server in {@code pod}'s network namespace and cgroup and returns once its log has a line
     * containing {@code ready}; it runs until {@link #close()}. Its log is in the sandbox's directory.
     */
    public void startServer(String pod, List<String> argv, String ready) throws IOException {
        Sandbox.PodRecord r = record(pod);
        Path log = Sandbox.named(name).dir().resolve("bench-" + r.netns() + "-" + servers.size() + ".log");
        Daemon.Spec spec = Daemon.of(argv.get(0) + " in " + pod, log, argv).inNetns(r.netns());
        Daemon d = (r.cgroup() == null ? spec : spec.inCgroup(Path.of(r.cgroup()))).start();
        synchronized (this) {
            servers.add(d);
        }
        try {
            d.awaitReady(Duration.ofSeconds(10), "says it is ready (" + ready + ")", () -> Logs.tail(log, 50).contains(ready));
        } catch (IllegalStateException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    /** Stops the servers and removes the sandbox; safe to call twice and from the shutdown hook. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        servers.forEach(d -> d.process().destroy());
        servers.forEach(d -> d.stop(Duration.ofSeconds(5)));
        for (Process p : processes) {
            p.destroy();
        }
        for (Process p : processes) {
            try {
                if (!p.waitFor(5, TimeUnit.SECONDS)) {
                    p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        CliRun down = HarnessMain.run("sandbox", "down", "--name", name);
        if (down.exitCode() != 0) {
            System.err.println("bench: sandbox down --name " + name + " failed: " + down.err().strip());
        }
        if (Thread.currentThread() != hook) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // the JVM is shutting down; the hook will find the sandbox closed
            }
        }
    }
}
