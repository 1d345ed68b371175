package io.npmagent.harness.node;

import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.ProcessRunner;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A network namespace the harness made: the one place one is created ({@code ip netns add}, loopback
 * up, no duplicate address detection, so addresses are usable at once) and removed. Commands run inside
 * through its runner. Deleting it takes its interfaces, netfilter tables and ipsets with it. A node, a
 * sandbox pod and a kernel test's pod are each one of these.
 */
public final class NetworkNamespace implements AutoCloseable {
    private static final AtomicInteger COUNTER = new AtomicInteger();
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final String name;
    private final ProcessRunner runner;

    private NetworkNamespace(String name) {
        this.name = name;
        this.runner = ProcessRunner.inNamespace(name);
    }

    /** Creates the namespace {@code name} (at most 31 characters, the kernel's limit for a file name here). */
    public static NetworkNamespace create(String name) {
        if (name.isEmpty() || name.length() > 31 || !name.matches("[A-Za-z0-9][A-Za-z0-9_.-]*")) {
            throw new IllegalArgumentException("network namespace name " + name + ": 1 to 31 of [A-Za-z0-9_.-]");
        }
        host("ip", "netns", "add", name);
        NetworkNamespace ns = new NetworkNamespace(name);
        try {
            ns.must("ip", "link", "set", "lo", "up");
            ns.must("sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0");
        } catch (RuntimeException e) {
            ns.close();
            throw e;
        }
        return ns;
    }

    /**
     * A new namespace for a test, named {@code npmt-<pid>-<n>-<label>} (cut to 31 characters): the JVM's
     * pid keeps parallel test JVMs and a crashed run's leftovers apart.
     */
    public static NetworkNamespace forTest(String label) {
        if (SWEPT.compareAndSet(false, true)) {
            sweepLeftovers();
        }
        String name = "npmt-" + ProcessHandle.current().pid() + "-" + COUNTER.incrementAndGet() + "-" + label;
        return create(name.length() > 31 ? name.substring(0, 31) : name);
    }

    private static final AtomicBoolean SWEPT = new AtomicBoolean();
    private static final Pattern TEST_NAME = Pattern.compile("npmt-(\\d+)-.*");

    /**
     * Deletes the test namespaces a killed run left (named {@code npmt-<pid>-...} for a pid that no longer
     * runs); {@link #forTest} does it once per JVM. A live JVM's namespaces, a parallel fork's included,
     * are never touched.
     */
    static List<String> sweepLeftovers() {
        List<String> removed = new ArrayList<>();
        File[] names = new File("/run/netns").listFiles();
        for (File f : names == null ? new File[0] : names) {
            Matcher m = TEST_NAME.matcher(f.getName());
            if (m.matches() && ProcessHandle.of(Long.parseLong(m.group(1))).map(h -> !h.isAlive()).orElse(true)) {
                existing(f.getName()).close();
                removed.add(f.getName());
            }
        }
        if (!removed.isEmpty()) {
            System.getLogger(NetworkNamespace.class.getName()).log(System.Logger.Level.INFO,
                    "removed {0} network namespaces a killed test run left: {1}", removed.size(), removed);
        }
        return removed;
    }

    /** One that exists already (made by an earlier process of the harness), to run commands in or delete. */
    public static NetworkNamespace existing(String name) {
        return new NetworkNamespace(name);
    }

    public String name() {
        return name;
    }

    public ProcessRunner runner() {
        return runner;
    }

    /** Turns on IPv4 and IPv6 forwarding: what a node does for its pods. */
    public NetworkNamespace forwarding() {
        must("sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1");
        return this;
    }

    /** Runs a command inside; returns its result whatever the exit code. */
    public CommandResult run(String... argv) {
        return runner.run(List.of(argv), "", TIMEOUT);
    }

    /** Runs a command inside and throws with its stderr if it fails. */
    public CommandResult must(String... argv) {
        return ok(run(argv), argv);
    }

    /** Runs a command inside with {@code input} on its stdin, and throws if it fails. */
    public CommandResult mustWithInput(String input, String... argv) {
        return ok(withInput(input, argv), argv);
    }

    public CommandResult withInput(String input, String... argv) {
        return runner.run(new ArrayList<>(List.of(argv)), input, TIMEOUT);
    }

    private CommandResult ok(CommandResult r, String... argv) {
        if (!r.ok()) {
            throw new IllegalStateException(String.join(" ", argv) + " in " + name + ": " + r.errorSummary());
        }
        return r;
    }

    /** Deletes the namespace; one already gone is no error. */
    @Override
    public void close() {
        ProcessRunner.host().run(List.of("ip", "netns", "del", name), "", TIMEOUT);
    }

    /** Whether a namespace of this name exists. */
    public static boolean exists(String name) {
        return Files.exists(Path.of("/run/netns", name));
    }

    static void host(String... argv) {
        CommandResult r = ProcessRunner.host().run(List.of(argv), "", TIMEOUT);
        if (!r.ok()) {
            throw new IllegalStateException(String.join(" ", argv) + ": " + r.errorSummary());
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
