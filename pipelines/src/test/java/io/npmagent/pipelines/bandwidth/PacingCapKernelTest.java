package io.npmagent.pipelines.bandwidth;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.harness.sandbox.Convergence;
import io.npmagent.harness.sandbox.Sandbox;
import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.pipelines.bench.BenchSandbox;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pacing at the socket (bpf lib/pacing.h) follows the pod on an open connection, in a sandbox on the eBPF
 * backend: while limited to 50M the socket's {@code SO_MAX_PACING_RATE} is set and at most four times the
 * rate; with the limit removed it is gone; limited again to 10M it is back, at most four times 10M. It reads
 * the socket option, not a rate, so it runs beside other tests (the rate: {@link PacingKernelTest}).
 */
class PacingCapKernelTest {
    private static final int SINK_PORT = 9100;
    private static final long UNPACED = 0xffffffffL;
    private static final long MBIT = 1_000_000;

    @TempDir
    Path dir;

    @Test
    void theCapFollowsThePodsLimitOnAnOpenConnection() throws Exception {
        KernelTestSupport.require("python3", "setsid");
        Path script = dir.resolve("pacingprobe.py");
        try (InputStream in = getClass().getResourceAsStream("pacingprobe.py")) {
            Files.copy(in, script, StandardCopyOption.REPLACE_EXISTING);
        }
        Path manifests = Files.createDirectories(dir.resolve("pods"));
        Path control = Files.createDirectories(dir.resolve("control"));
        String name = "pacecap-" + ProcessHandle.current().pid() % 100000;
        BandwidthManifests.write(manifests, "50M", null);
        try (BenchSandbox sandbox = BenchSandbox.up(name, manifests, "bpf", 0)) {
            sandbox.startServer(BandwidthManifests.SERVER, List.of("python3", script.toString(), "sink", Integer.toString(SINK_PORT)), "ready");
            CompletableFuture<CommandResult> probe = CompletableFuture.supplyAsync(() -> {
                try {
                    return sandbox.run(BandwidthManifests.CLIENT, List.of("python3", script.toString(), "probe", BandwidthManifests.SERVER_IP,
                            Integer.toString(SINK_PORT), control.toString(), "3"), Duration.ofSeconds(300));
                } catch (java.io.IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            phase(control, 1);
            BandwidthManifests.write(manifests, null, null);
            Convergence.await(Sandbox.named(name), Duration.ofSeconds(60));
            phase(control, 2);
            BandwidthManifests.write(manifests, "10M", null);
            Convergence.await(Sandbox.named(name), Duration.ofSeconds(60));
            phase(control, 3);

            CommandResult r = probe.get();
            assertThat(r.exitCode()).as(r.stdout() + r.stderr()).isZero();
            Map<Integer, Long> caps = new HashMap<>();
            for (String line : r.stdout().strip().split("\n")) {
                String[] words = line.split(" ");
                caps.put(Integer.parseInt(words[0]), Long.parseLong(words[1]));
            }
            System.out.println("pacing caps by phase (bytes/s): " + caps);
            assertThat(caps.get(1)).as("limited to 50M: capped, at most 4 x 50 Mbit/s").isPositive().isLessThanOrEqualTo(4 * 50 * MBIT / 8);
            assertThat(caps.get(2)).as("no limit: no cap").isEqualTo(UNPACED);
            assertThat(caps.get(3)).as("limited to 10M: capped again, at most 4 x 10 Mbit/s").isPositive().isLessThanOrEqualTo(4 * 10 * MBIT / 8);
        }
    }

    /** Lets the probe send and read its cap for this phase, and waits until it has. */
    private static void phase(Path control, int n) throws Exception {
        Files.writeString(control.resolve("go." + n), "");
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!Files.exists(control.resolve("done." + n))) {
            assertThat(System.nanoTime()).as("the probe finished phase %d", n).isLessThan(deadline);
            Thread.sleep(50);
        }
    }
}
