package io.npmagent.iptables.nft;

import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.CommandRunner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * A real runner with a tap: records every {@code nft -f -} script and can rewrite one on its way to
 * nft (a kernel test's way to have the kernel refuse a chosen batch).
 */
final class TapRunner implements CommandRunner {
    private final CommandRunner inner;
    final List<String> scripts = new ArrayList<>();
    UnaryOperator<String> rewrite = UnaryOperator.identity();

    TapRunner(CommandRunner inner) {
        this.inner = inner;
    }

    @Override
    public CommandResult run(List<String> argv, String stdin, Duration timeout) {
        if (argv.equals(FakeNft.APPLY)) {
            scripts.add(stdin);
            return inner.run(argv, rewrite.apply(stdin), timeout);
        }
        return inner.run(argv, stdin, timeout);
    }

    @Override
    public boolean available(String program) {
        return inner.available(program);
    }
}
