package io.npmagent.dataplane.kernel;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.CommandRunner;
import io.npmagent.dataplane.exec.ProcessRunner;
import java.time.Duration;
import java.util.List;

/**
 * Gate for tests that need root, network namespaces and kernel tools. Outside CI a missing
 * requirement skips the test with the reason; with {@code CI=true} it fails it, because in CI a kernel
 * test that cannot run must never pass silently.
 */
public final class KernelTestSupport {
    private KernelTestSupport() {}

    public static boolean inCi() {
        return "true".equalsIgnoreCase(System.getenv("CI"));
    }

    /** Requires root, {@code ip netns}, and each of {@code programs}. */
    public static void require(String... programs) {
        CommandRunner host = ProcessRunner.host();
        check(host.run(List.of("id", "-u"), "", Duration.ofSeconds(5)).stdout().strip().equals("0"), "not running as root");
        check(host.available("ip"), "iproute2 (ip) is not installed");
        for (String p : programs) {
            check(host.available(p), p + " is not installed");
        }
    }

    private static void check(boolean ok, String reason) {
        if (ok) {
            return;
        }
        if (inCi()) {
            fail("kernel test cannot run in CI: " + reason);
        }
        assumeTrue(false, "kernel test skipped: " + reason);
    }

    /** Runs a command on the host and fails the test if it fails. */
    public static CommandResult must(List<String> argv) {
        CommandResult r = ProcessRunner.host().run(argv, "", Duration.ofSeconds(30));
        if (!r.ok()) {
            fail(String.join(" ", argv) + ": " + r.errorSummary());
        }
        return r;
    }
}
