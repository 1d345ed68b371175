package io.npmagent.pipelines.datapath;

import io.npmagent.pipelines.bench.BenchSandbox;
import io.npmagent.pipelines.bench.Iperf;
import io.npmagent.pipelines.bench.TempDir;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One benchmark point: a fresh sandbox (so no conntrack state carries over from the point before) with
 * N policies selecting the server, {@code tcprate} and {@code iperf3} servers in the server pod, a check
 * that the intruder pod is blocked exactly when some policy selects the server, then, each repetition,
 * new connections per second and bulk throughput from the client pod, each after a warm-up that is not
 * counted.
 */
final class DatapathRun {
    /** Not counted at the start of each measurement: ARP, caches, slow start. */
    static final int WARMUP_SECONDS = 1;

    /** What is measured, how long and how often. */
    record Settings(int seconds, int repeat, boolean connectionsOnly) {}

    private final TcpRate tcprate;
    private final Settings settings;
    private final PrintStream progress;

    DatapathRun(TcpRate tcprate, Settings settings, PrintStream progress) {
        this.tcprate = tcprate;
        this.settings = settings;
        this.progress = progress;
    }

    DatapathPoint measure(String backend, int policies, String sandboxName) {
        try (TempDir dir = TempDir.create("npm-datapath-")) {
            BenchManifests.write(dir.path(), policies);
            long start = System.nanoTime();
            try (BenchSandbox sandbox = BenchSandbox.up(sandboxName, dir.path(), backend, policies)) {
                say("%s, %d policies: sandbox %s up in %.1f s", backend, policies, sandboxName, (System.nanoTime() - start) / 1e9);
                sandbox.startServer(BenchManifests.SERVER, tcprate.server(BenchManifests.RATE_PORT), "ready");
                if (!settings.connectionsOnly()) {
                    sandbox.startServer(BenchManifests.SERVER, Iperf.server(BenchManifests.IPERF_PORT), Iperf.READY);
                }
                boolean blocked = intruderBlocked(sandbox);
                say("%s, %d policies: intruder %s", backend, policies, blocked ? "blocked" : "not blocked");
                List<Double> connections = new ArrayList<>();
                List<Double> gbits = new ArrayList<>();
                Duration timeout = Duration.ofSeconds(settings.seconds() + WARMUP_SECONDS + 30L);
                for (int i = 1; i <= settings.repeat(); i++) {
                    double rate = TcpRate.parse(sandbox.run(BenchManifests.CLIENT, tcprate.client(BenchManifests.SERVER_IP,
                            BenchManifests.RATE_PORT, settings.seconds(), TcpRate.CONCURRENCY, WARMUP_SECONDS, Duration.ofSeconds(1)), timeout));
                    if (rate <= 0) {
                        throw new IOException("the client could not connect to the server: the policy that admits it did not work");
                    }
                    connections.add(rate);
                    String line = String.format(Locale.ROOT, "%s, %d policies: run %d/%d: %.0f conn/s", backend, policies, i,
                            settings.repeat(), rate);
                    if (!settings.connectionsOnly()) {
                        double gbit = Iperf.gbitPerSecond(sandbox.run(BenchManifests.CLIENT, Iperf.client(BenchManifests.SERVER_IP,
                                BenchManifests.IPERF_PORT, settings.seconds(), WARMUP_SECONDS), timeout));
                        gbits.add(gbit);
                        line += String.format(Locale.ROOT, ", %.2f Gbit/s", gbit);
                    }
                    say("%s", line);
                }
                return DatapathPoint.ok(backend, policies, connections, gbits, blocked);
            }
        } catch (IOException | BenchSandbox.UpFailed | RuntimeException e) {
            say("%s, %d policies: FAILED: %s", backend, policies, e.getMessage());
            return DatapathPoint.failed(backend, policies, String.valueOf(e.getMessage()));
        }
    }

    /**
     * Whether the intruder (a pod no policy admits) fails to connect to the rate port for a second: real
     * packets through the same path, so a row with policies is known to have been enforced.
     */
    private boolean intruderBlocked(BenchSandbox sandbox) throws IOException {
        double rate = TcpRate.parse(sandbox.run(BenchManifests.INTRUDER, tcprate.client(BenchManifests.SERVER_IP,
                BenchManifests.RATE_PORT, 1, 4, 0, Duration.ofMillis(250)), Duration.ofSeconds(30)));
        return rate == 0;
    }

    private void say(String format, Object... args) {
        synchronized (progress) {
            progress.println("# " + String.format(Locale.ROOT, format, args));
            progress.flush();
        }
    }
}
