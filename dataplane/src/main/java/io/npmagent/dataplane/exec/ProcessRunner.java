package io.npmagent.dataplane.exec;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Runs processes for real. With a network namespace name, every command runs inside it through
 * {@code ip netns exec} (the sandbox and kernel tests); without one, in the agent's own namespace.
 * stdout and stderr are read while the process runs, so a large save never blocks on a full pipe.
 */
public final class ProcessRunner implements CommandRunner {
    /** Readers block until the process closes its pipes: never on the common pool, which may have one thread. */
    private static final ExecutorService READERS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "process-output");
        t.setDaemon(true);
        return t;
    });

    private final List<String> prefix;
    private final String netns;

    private ProcessRunner(String netns) {
        this.netns = netns;
        this.prefix = netns == null ? List.of() : List.of("ip", "netns", "exec", netns);
    }

    public static ProcessRunner host() {
        return new ProcessRunner(null);
    }

    public static ProcessRunner inNamespace(String netns) {
        return new ProcessRunner(netns);
    }

    @Override
    public String netns() {
        return netns;
    }

    @Override
    public CommandResult run(List<String> argv, String stdin, Duration timeout) {
        List<String> full = new ArrayList<>(prefix);
        full.addAll(argv);
        Process process;
        try {
            process = new ProcessBuilder(full).start();
        } catch (IOException e) {
            return new CommandResult(argv, 127, "", "cannot start " + argv.get(0) + ": " + e.getMessage());
        }
        CompletableFuture<String> out = drain(process.getInputStream());
        CompletableFuture<String> err = drain(process.getErrorStream());
        try (OutputStream in = process.getOutputStream()) {
            in.write(stdin.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            // The process exited before reading all of stdin; its exit code and stderr say why.
        }
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
                return new CommandResult(argv, 124, out.getNow(""), "timed out after " + timeout.toSeconds() + " s");
            }
            return new CommandResult(argv, process.exitValue(), out.join(), err.join());
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            return new CommandResult(argv, 130, "", "interrupted");
        }
    }

    @Override
    public boolean available(String program) {
        if (program.contains("/")) {
            return Files.isExecutable(Path.of(program));
        }
        String path = System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        for (String dir : (path + ":/usr/sbin:/sbin").split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
                return true;
            }
        }
        return false;
    }

    private static CompletableFuture<String> drain(InputStream stream) {
        return CompletableFuture.supplyAsync(() -> {
            try (stream) {
                ByteArrayOutputStream buffer = new ByteArrayOutputStream();
                stream.transferTo(buffer);
                return buffer.toString(StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, READERS);
    }
}
