package io.npmagent.pipelines.datapath;

import io.npmagent.harness.sandbox.Convergence;
import io.npmagent.harness.sandbox.Sandbox;
import io.npmagent.harness.sandbox.ServiceTargets;
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
 * that the intruder pod is blocked exactly when some policy selects the server (on its address and
 * through its ClusterIP), then, each repetition, new connections per second to the server's address and
 * through its ClusterIP and bulk throughput from the client pod, each after a warm-up that is not counted.
 */
final class DatapathRun {
    /** Not counted at the start of each measurement: ARP, caches, slow start. */
    static final int WARMUP_SECONDS = 1;
    /** How long kube-proxy may take to program the server's Service after the sandbox is up. */
    private static final Duration SERVICE_WAIT = Duration.ofSeconds(60);

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
            try (BenchSandbox sandbox = BenchSandbox.up(sandboxName, dir.path(), backend, BenchManifests.applied(policies))) {
                ServiceTargets.await(Sandbox.named(sandboxName), SERVICE_WAIT);
                say("%s, %d policies: sandbox %s up, kube-proxy's Service rules in place, in %.1f s", backend, policies, sandboxName,
                        (System.nanoTime() - start) / 1e9);
                sandbox.startServer(BenchManifests.SERVER, tcprate.server(BenchManifests.RATE_PORT), "ready");
                if (!settings.connectionsOnly()) {
                    sandbox.startServer(BenchManifests.SERVER, Iperf.server(BenchManifests.IPERF_PORT), Iperf.READY);
                }
                boolean blocked = intruderBlocked(sandbox, BenchManifests.SERVER_IP);
                boolean blockedViaService = intruderBlocked(sandbox, BenchManifests.SERVICE_IP);
                say("%s, %d policies: intruder %s, through the ClusterIP %s", backend, policies, blocked ? "blocked" : "not blocked",
                        blockedViaService ? "blocked" : "not blocked");
                List<Double> connections = new ArrayList<>();
                List<Double> viaService = new ArrayList<>();
                List<Double> gbits = new ArrayList<>();
                Duration timeout = Duration.ofSeconds(settings.seconds() + WARMUP_SECONDS + 30L);
                for (int i = 1; i <= settings.repeat(); i++) {
                    double rate = connectionRate(sandbox, BenchManifests.SERVER_IP, timeout);
                    double serviceRate = connectionRate(sandbox, BenchManifests.SERVICE_IP, timeout);
                    connections.add(rate);
                    viaService.add(serviceRate);
                    String line = String.format(Locale.ROOT, "%s, %d policies: run %d/%d: %.0f conn/s, %.0f through the ClusterIP", backend,
                            policies, i, settings.repeat(), rate, serviceRate);
                    if (!settings.connectionsOnly()) {
                        double gbit = Iperf.gbitPerSecond(sandbox.run(BenchManifests.CLIENT, Iperf.client(BenchManifests.SERVER_IP,
                                BenchManifests.IPERF_PORT, settings.seconds(), WARMUP_SECONDS), timeout));
                        gbits.add(gbit);
                        line += String.format(Locale.ROOT, ", %.2f Gbit/s", gbit);
                    }
                    say("%s", line);
                }
                return DatapathPoint.ok(backend, policies, new DatapathPoint.Samples(connections, viaService, gbits), blocked,
                        blockedViaService);
            }
        } catch (IOException | BenchSandbox.UpFailed | Convergence.NotConverged | RuntimeException e) {
            say("%s, %d policies: FAILED: %s", backend, policies, e.getMessage());
            return DatapathPoint.failed(backend, policies, String.valueOf(e.getMessage()));
        }
    }

    /** The client's new connections per second to the rate port at {@code address} (the server's, or its ClusterIP). */
    private double connectionRate(BenchSandbox sandbox, String address, Duration timeout) throws IOException {
        double rate = TcpRate.parse(sandbox.run(BenchManifests.CLIENT, tcprate.client(address, BenchManifests.RATE_PORT, settings.seconds(),
                TcpRate.CONCURRENCY, WARMUP_SECONDS, Duration.ofSeconds(1)), timeout));
        if (rate <= 0) {
            throw new IOException("the client could not connect to the server at " + address + ": the policies that admit it did not work");
        }
        return rate;
    }

    /**
     * Whether the intruder (a pod no policy admits) fails to connect to the rate port at {@code address}
     * for a second: real packets through the same path, so a row with policies is known to have been enforced.
     */
    private boolean intruderBlocked(BenchSandbox sandbox, String address) throws IOException {
        double rate = TcpRate.parse(sandbox.run(BenchManifests.INTRUDER, tcprate.client(address,
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
