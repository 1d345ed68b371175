package io.npmagent.harness.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A long-running process the harness starts: the one place one is launched (etcd, kube-apiserver,
 * kube-proxy, the agent, a pod's servers, a node's daemons). Its stdin is /dev/null and its output is
 * appended to its log file. Where it runs is said, not scripted: {@link Spec#inCgroup} moves it into a
 * cgroup2 directory before it starts (so a pod's sockets belong to the pod's cgroup, and a node's
 * processes can be found and stopped by theirs), {@link Spec#inNetns} runs it in a network namespace,
 * {@link Spec#detached} puts it in a session of its own so it outlives the command that started it
 * ({@code sandbox up} returns; the node keeps running). Paths and names are arguments of the wrappers,
 * never part of a shell script. {@link #stop} sends SIGTERM, then SIGKILL after the grace time.
 */
public final class Daemon {
    private final String name;
    private final Path log;
    private final List<String> command;
    private final Process process;

    private Daemon(String name, Path log, List<String> command, Process process) {
        this.name = name;
        this.log = log;
        this.command = command;
        this.process = process;
    }

    /** A daemon named {@code name} (for messages) running {@code argv}, its output appended to {@code log}. */
    public static Spec of(String name, Path log, List<String> argv) {
        return new Spec(name, log, argv);
    }

    /** What to start and where; {@link #start()} starts it. */
    public static final class Spec {
        private final String name;
        private final Path log;
        private final List<String> argv;
        private Path cgroup;
        private String netns;
        private List<String> enter = List.of();
        private boolean detached;
        private final Map<String, String> env = new LinkedHashMap<>();

        private Spec(String name, Path log, List<String> argv) {
            if (argv.isEmpty()) {
                throw new IllegalArgumentException(name + ": no command");
            }
            this.name = name;
            this.log = log;
            this.argv = List.copyOf(argv);
        }

        /** Runs it inside the cgroup2 directory {@code cgroup} (which must exist). */
        public Spec inCgroup(Path cgroup) {
            this.cgroup = cgroup;
            return this;
        }

        /** Runs it in the named network namespace ({@code ip netns exec}). */
        public Spec inNetns(String netns) {
            this.netns = netns;
            this.enter = List.of();
            return this;
        }

        /** Runs it in the namespaces named by {@code nsenter} options ({@code --net=/run/netns/N}, {@code --mount=F}). */
        public Spec entering(List<String> nsenterOptions) {
            this.enter = List.copyOf(nsenterOptions);
            this.netns = null;
            return this;
        }

        /** In a session of its own: it outlives this JVM, and a terminal's signals do not reach it. */
        public Spec detached() {
            this.detached = true;
            return this;
        }

        public Spec env(String key, String value) {
            env.put(key, value);
            return this;
        }

        /** The whole command line, wrappers first: what {@link #start()} runs. */
        public List<String> command() {
            List<String> inner = new ArrayList<>();
            if (netns != null) {
                inner.addAll(List.of("ip", "netns", "exec", netns));
            }
            if (!enter.isEmpty()) {
                inner.add("nsenter");
                inner.addAll(enter);
                inner.add("--");
            }
            inner.addAll(argv);
            List<String> out = new ArrayList<>();
            if (detached) {
                out.add("setsid");
            }
            out.addAll(cgroup == null ? inner : Cgroups.inside(cgroup, inner));
            return List.copyOf(out);
        }

        public Daemon start() throws IOException {
            Files.createDirectories(log.toAbsolutePath().getParent());
            List<String> full = command();
            ProcessBuilder pb = new ProcessBuilder(full)
                    .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .redirectErrorStream(true);
            pb.environment().putAll(env);
            return new Daemon(name, log, full, pb.start());
        }
    }

    public String name() {
        return name;
    }

    public Path log() {
        return log;
    }

    public long pid() {
        return process.pid();
    }

    public boolean alive() {
        return process.isAlive();
    }

    public Process process() {
        return process;
    }

    /** Why it is not running, for an error message: its exit status and the end of its log. */
    public String died() {
        String status = process.isAlive() ? "running" : "exited with " + process.exitValue();
        return name + " " + status + "; the last lines of " + log + ":\n" + Logs.tail(log, 20);
    }

    /** Waits until {@code ready} holds, failing at once (with its log) if it exits first. */
    public Daemon awaitReady(Duration timeout, String what, java.util.function.BooleanSupplier ready) {
        Await.until(timeout, name + ": " + what, () -> {
            if (!process.isAlive()) {
                throw new Await.Abort(died());
            }
            return ready.getAsBoolean();
        }, this::died);
        return this;
    }

    /** SIGTERM, then SIGKILL after {@code grace}; returns once it is gone. */
    public void stop(Duration grace) {
        stop(process.toHandle(), grace);
    }

    /** Stops with ten seconds' grace. */
    public void stop() {
        stop(Duration.ofSeconds(10));
    }

    /** SIGTERM to {@code h}, then SIGKILL after {@code grace}: how every process of the harness is stopped. */
    public static void stop(ProcessHandle h, Duration grace) {
        if (!h.isAlive()) {
            return;
        }
        h.destroy();
        try {
            h.onExit().get(grace.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
            h.destroyForcibly();
            h.onExit().orTimeout(10, TimeUnit.SECONDS).exceptionally(t -> h).join();
        } catch (InterruptedException e) {
            h.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return name + " (pid " + process.pid() + "): " + String.join(" ", command);
    }
}
