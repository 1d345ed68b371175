package io.npmagent.harness.controlplane;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One upstream process of a control plane (etcd, kube-apiserver, ...), its output appended to a log
 * file, stopped with SIGTERM and, after ten seconds, SIGKILL.
 */
final class ChildProcess {
    private final String name;
    private final List<String> argv;
    private final Path log;
    private Process process;

    ChildProcess(String name, List<String> argv, Path log) {
        this.name = name;
        this.argv = List.copyOf(argv);
        this.log = log;
    }

    ChildProcess start() throws IOException {
        Files.createDirectories(log.getParent());
        process = new ProcessBuilder(argv)
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .redirectErrorStream(true)
                .start();
        return this;
    }

    boolean alive() {
        return process != null && process.isAlive();
    }

    long pid() {
        return process == null ? 0 : process.pid();
    }

    String name() {
        return name;
    }

    Path log() {
        return log;
    }

    /** Why it is not running, for an error message: its exit status and the end of its log. */
    String died() {
        String status = process == null ? "never started" : process.isAlive() ? "running" : "exited with " + process.exitValue();
        return name + " " + status + "; the last lines of " + log + ":\n" + Logs.tail(log, 20);
    }

    void stop() {
        if (process == null || !process.isAlive()) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
