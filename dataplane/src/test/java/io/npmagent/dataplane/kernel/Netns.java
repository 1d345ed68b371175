package io.npmagent.dataplane.kernel;

import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.ProcessRunner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A network namespace a test creates and removes, with a runner for commands inside it. Names carry the
 * test JVM's pid, so parallel runs and leftovers of a crashed run never collide; closing deletes the
 * namespace, which takes its interfaces, netfilter tables and ipsets with it.
 */
public final class Netns implements AutoCloseable {
    private static final AtomicInteger COUNTER = new AtomicInteger();

    private final String name;
    private final ProcessRunner runner;

    private Netns(String name) {
        this.name = name;
        this.runner = ProcessRunner.inNamespace(name);
    }

    /** A new namespace named {@code npmt-<pid>-<n>-<label>} (at most 31 characters, the kernel's limit for our use). */
    public static Netns create(String label) {
        String name = ("npmt-" + ProcessHandle.current().pid() + "-" + COUNTER.incrementAndGet() + "-" + label);
        if (name.length() > 31) {
            name = name.substring(0, 31);
        }
        KernelTestSupport.must(List.of("ip", "netns", "add", name));
        Netns ns = new Netns(name);
        ns.must("ip", "link", "set", "lo", "up");
        return ns;
    }

    public String name() {
        return name;
    }

    public ProcessRunner runner() {
        return runner;
    }

    /** Runs a command inside; returns its result whatever the exit code. */
    public CommandResult run(String... argv) {
        return runner.run(List.of(argv), "", Duration.ofSeconds(30));
    }

    /** Runs a command inside and throws with its stderr if it fails. */
    public CommandResult must(String... argv) {
        CommandResult r = run(argv);
        if (!r.ok()) {
            throw new AssertionError(String.join(" ", argv) + " in " + name + ": " + r.errorSummary());
        }
        return r;
    }

    public CommandResult withInput(String input, String... argv) {
        return runner.run(new ArrayList<>(List.of(argv)), input, Duration.ofSeconds(30));
    }

    @Override
    public void close() {
        ProcessRunner.host().run(List.of("ip", "netns", "del", name), "", Duration.ofSeconds(30));
    }
}
