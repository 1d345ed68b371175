package io.npmagent.iptables;

import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.CommandRunner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;

/**
 * A runner with a tap: records every call with its input, and can rewrite an input on its way to the
 * real process (a kernel test's way to have the kernel refuse a chosen batch).
 */
public final class TapRunner implements CommandRunner {
    private final CommandRunner inner;
    private final List<Call> calls = new ArrayList<>();
    /** Given argv and input, the input to send instead. */
    public BiFunction<List<String>, String, String> rewrite = (argv, in) -> in;

    public record Call(List<String> argv, String stdin) {}

    public TapRunner(CommandRunner inner) {
        this.inner = inner;
    }

    @Override
    public synchronized CommandResult run(List<String> argv, String stdin, Duration timeout) {
        calls.add(new Call(argv, stdin));
        return inner.run(argv, rewrite.apply(argv, stdin), timeout);
    }

    @Override
    public boolean available(String program) {
        return inner.available(program);
    }

    /** The inputs of every call of {@code argv}, in order. */
    public synchronized List<String> inputs(List<String> argv) {
        return calls.stream().filter(c -> c.argv().equals(argv)).map(Call::stdin).toList();
    }

    public synchronized List<Call> calls() {
        return List.copyOf(calls);
    }
}
