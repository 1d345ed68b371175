package io.npmagent.pipelines.scale;

import io.npmagent.iptables.exec.CommandResult;
import io.npmagent.iptables.exec.CommandRunner;
import java.time.Duration;
import java.util.List;

/** Times every kernel write a backend makes (restores and {@code nft -f}) and keeps the longest. */
final class TimingRunner implements CommandRunner {
    private final CommandRunner inner;
    private long longestNanos;
    private int writes;

    TimingRunner(CommandRunner inner) {
        this.inner = inner;
    }

    @Override
    public CommandResult run(List<String> argv, String stdin, Duration timeout) {
        boolean write = argv.get(0).endsWith("-restore") || argv.equals(List.of("ipset", "restore"))
                || (argv.get(0).equals("nft") && argv.contains("-f"));
        long start = System.nanoTime();
        CommandResult r = inner.run(argv, stdin, timeout);
        if (write) {
            synchronized (this) {
                longestNanos = Math.max(longestNanos, System.nanoTime() - start);
                writes++;
            }
        }
        return r;
    }

    @Override
    public boolean available(String program) {
        return inner.available(program);
    }

    synchronized double longestSeconds() {
        return longestNanos / 1e9;
    }

    synchronized int writes() {
        return writes;
    }
}
