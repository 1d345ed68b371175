package io.npmagent.pipelines.datapath;

import io.npmagent.harness.sandbox.Convergence;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.npmagent.harness.sandbox.Sandbox;
import io.npmagent.harness.sandbox.SandboxNode;
import io.npmagent.harness.sandbox.ServiceTargets;
import io.npmagent.pipelines.bench.BenchSandbox;
import io.npmagent.pipelines.bench.Iperf;
import io.npmagent.pipelines.bench.NativeTool;
import io.npmagent.pipelines.bench.PromText;
import io.npmagent.pipelines.bench.TempDir;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;

/**
 * {@code pipelines/datapath --flows}: what flow verdicts cost, per backend, with 1,000 policies selecting the
 * server, side by side with flows off ({@code Flows.Denied: false}) and on (the default), in one sandbox whose
 * agent is switched between them live, the sides interleaved. Each side: new connections per second and
 * throughput from the allowed client; then a flood of denied SYNs from the
 * intruder ({@code synflood}, one core, each to a new port: a new flow each, the worst case for the
 * reports) while the client measures again, with the node's CPU (the whole machine's, from
 * {@code /proc/stat}: the sandbox's node shares its kernel), the kernel's reports a second (against the rate
 * they are bounded by) and the reports counted lost a second, from the agent's metrics.
 */
final class FlowCostRun {
    static final int POLICIES = 1000;
    /** Reports a second per CPU the sandbox's agent may send (Flows.RatePerSecond, the default). */
    static final int RATE = 1000;
    private static final int FLOOD_FIRST_PORT = 10_000;
    private static final int FLOOD_PORTS = 50_000;
    private static final Duration SERVICE_WAIT = Duration.ofSeconds(60);
    /** Floods a side: two, their order alternated (a flood's leftovers, its conntrack entries say, weigh on both sides alike). */
    private static final int FLOODS = 2;
    /** How long a change of Flows.Denied may take to be in force: the file read every 2 s, then a re-render of 1,000 policies' chains. */
    private static final Duration TURN_WAIT = Duration.ofSeconds(120);
    private static final Duration SETTLE_WAIT = Duration.ofSeconds(30);
    /** The machine's busy share below which it counts as settled: the sandbox's idle control plane and agent. */
    private static final double IDLE_BUSY = 0.15;

    /** One side of one backend; NaN where not measured. {@code pairedChange}: on the "on" row, the median of the rounds' on/off ratios, less one. */
    record Row(String backend, boolean flows, double connections, double gbit, double pairedChange, double synsSent, double connectionsUnderFlood,
            double cpuBusy, double reportsPerSecond, double lostPerSecond, String error) {
        static Row failed(String backend, boolean flows, Exception e) {
            return new Row(backend, flows, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN,
                    String.valueOf(e.getMessage()));
        }
    }

    private final TcpRate tcprate;
    private final Path synflood;
    private final DatapathRun.Settings settings;
    private final PrintStream progress;

    FlowCostRun(TcpRate tcprate, DatapathRun.Settings settings, PrintStream progress) throws IOException, NativeTool.BuildFailed {
        this.tcprate = tcprate;
        this.synflood = NativeTool.build("synflood");
        this.settings = settings;
        this.progress = progress;
    }

    /**
     * Both sides of one backend in one sandbox: flows turned off and on through the agent's configuration file
     * (applied live; {@code npm_flow_reporting} says when the kernel has it), the sides interleaved in every
     * round and their order alternated, so that the machine's drift and one sandbox's luck weigh on both alike.
     * Rows: off, then on (whose {@code pairedChange} is the median of the rounds' on-against-off ratios).
     */
    List<Row> measure(String backend, String sandboxName) {
        try (TempDir dir = TempDir.create("npm-flowcost-")) {
            BenchManifests.write(dir.path(), POLICIES);
            String config = "{\"Flows\": {\"Denied\": false, \"RatePerSecond\": " + RATE + "}}";
            try (BenchSandbox sandbox = BenchSandbox.up(sandboxName, dir.path(), backend, BenchManifests.applied(POLICIES), "--agent-config", config)) {
                ServiceTargets.await(Sandbox.named(sandboxName), SERVICE_WAIT);
                sandbox.startServer(BenchManifests.SERVER, tcprate.server(BenchManifests.RATE_PORT), "ready");
                if (!settings.connectionsOnly()) {
                    sandbox.startServer(BenchManifests.SERVER, Iperf.server(BenchManifests.IPERF_PORT), Iperf.READY);
                }
                Duration timeout = Duration.ofSeconds(settings.seconds() + DatapathRun.WARMUP_SECONDS + 30L);
                Side off = new Side(false);
                Side on = new Side(true);
                List<Double> ratios = new ArrayList<>();
                for (int i = 1; i <= settings.repeat(); i++) {
                    for (Side side : inOrder(i, off, on)) {
                        turn(sandbox, side.flows);
                        side.connections.add(connectionRate(sandbox, timeout));
                        if (!settings.connectionsOnly()) {
                            side.gbits.add(Iperf.gbitPerSecond(sandbox.run(BenchManifests.CLIENT, Iperf.client(BenchManifests.SERVER_IP,
                                    BenchManifests.IPERF_PORT, settings.seconds(), DatapathRun.WARMUP_SECONDS), timeout)));
                        }
                        say("%s, flows %s: round %d/%d: %.0f conn/s%s", backend, side.flows ? "on" : "off", i, settings.repeat(),
                                side.connections.get(i - 1), side.gbits.isEmpty() ? "" : String.format(Locale.ROOT, ", %.2f Gbit/s",
                                        side.gbits.get(i - 1)));
                    }
                    ratios.add(on.connections.get(i - 1) / off.connections.get(i - 1));
                }
                for (int i = 1; i <= FLOODS; i++) {
                    for (Side side : inOrder(i, off, on)) {
                        turn(sandbox, side.flows);
                        Flood f = flood(sandbox, timeout);
                        side.floods.add(f);
                        say("%s, flows %s: flood %d/%d: %.0f denied SYNs/s sent, %.0f conn/s, CPU %.0f%% busy, %.0f kernel reports/s, "
                                + "%.0f reports lost/s", backend, side.flows ? "on" : "off", i, FLOODS, f.synsSent, f.connections, 100 * f.cpuBusy,
                                f.reportsPerSecond, f.lostPerSecond);
                    }
                }
                List<Row> rows = new ArrayList<>();
                for (Side side : List.of(off, on)) {
                    rows.add(new Row(backend, side.flows, median(side.connections), side.gbits.isEmpty() ? Double.NaN : median(side.gbits),
                            side.flows ? median(ratios) - 1 : Double.NaN, median(side.floods, Flood::synsSent),
                            median(side.floods, Flood::connections), median(side.floods, Flood::cpuBusy),
                            median(side.floods, Flood::reportsPerSecond), median(side.floods, Flood::lostPerSecond), null));
                }
                return rows;
            }
        } catch (IOException | BenchSandbox.UpFailed | Convergence.NotConverged | RuntimeException e) {
            say("%s: FAILED: %s", backend, e.getMessage());
            return List.of(Row.failed(backend, false, e), Row.failed(backend, true, e));
        }
    }

    /** The two sides in round {@code round}'s order: off first in odd rounds, on first in even ones. */
    private static List<Side> inOrder(int round, Side off, Side on) {
        return round % 2 == 1 ? List.of(off, on) : List.of(on, off);
    }

    /** One side's measurements across the rounds. */
    private static final class Side {
        final boolean flows;
        final List<Double> connections = new ArrayList<>();
        final List<Double> gbits = new ArrayList<>();
        final List<Flood> floods = new ArrayList<>();

        Side(boolean flows) {
            this.flows = flows;
        }
    }

    /**
     * Sets {@code Flows.Denied} in every node's agent configuration file, which the agent reads every 2 s and
     * applies live, and waits until its metrics say the kernel has it (a netfilter backend re-renders its chains).
     */
    private void turn(BenchSandbox sandbox, boolean flows) throws IOException {
        for (SandboxNode node : Sandbox.named(sandbox.name()).nodes()) {
            Path file = node.stateDir().resolve("agent-config.json");
            JsonObject config = JsonParser.parseString(Files.readString(file)).getAsJsonObject();
            JsonObject f = config.has("Flows") ? config.getAsJsonObject("Flows") : new JsonObject();
            f.addProperty("Denied", flows);
            config.add("Flows", f);
            Files.writeString(file, config + "\n");
        }
        long deadline = System.nanoTime() + TURN_WAIT.toNanos();
        double want = flows ? 1 : 0;
        while (PromText.samples(sandbox.metrics(), "npm_flow_reporting{verdict=\"denied\"}").values().stream().noneMatch(v -> v == want)) {
            if (System.nanoTime() - deadline > 0) {
                throw new IOException("the agent did not turn flows " + (flows ? "on" : "off") + " within " + TURN_WAIT.toSeconds() + " s");
            }
            sleep(Duration.ofMillis(500));
        }
        settle();
    }

    /**
     * Waits (at most {@link #SETTLE_WAIT}) for a second in which the machine is nearly idle: a netfilter backend's
     * re-render of 1,000 policies leaves the agent busy for a while after the kernel has it (its collector, its
     * read-back), and the side measured next must not pay for the switch.
     */
    private static void settle() throws IOException {
        long deadline = System.nanoTime() + SETTLE_WAIT.toNanos();
        while (System.nanoTime() - deadline < 0) {
            long[] before = cpu();
            sleep(Duration.ofSeconds(1));
            long[] after = cpu();
            double total = after[0] - before[0];
            if (total > 0 && 1 - (after[1] - before[1]) / total < IDLE_BUSY) {
                return;
            }
        }
    }

    private record Flood(double synsSent, double connections, double cpuBusy, double reportsPerSecond, double lostPerSecond) {}

    /** The intruder's SYN flood and, at the same time, the client's new connections; the agent's counters and the CPU around both. */
    private Flood flood(BenchSandbox sandbox, Duration timeout) throws IOException {
        String before = sandbox.metrics();
        long[] cpuBefore = cpu();
        long t0 = System.nanoTime();
        int seconds = settings.seconds() + DatapathRun.WARMUP_SECONDS;
        CompletableFuture<String> sent = CompletableFuture.supplyAsync(() -> {
            try {
                var r = sandbox.run(BenchManifests.INTRUDER, List.of(synflood.toString(), BenchManifests.INTRUDER_IP, BenchManifests.SERVER_IP,
                        Integer.toString(FLOOD_FIRST_PORT), Integer.toString(FLOOD_PORTS), Integer.toString(seconds)), timeout);
                if (!r.ok()) {
                    throw new IllegalStateException("synflood failed: " + r.errorSummary());
                }
                return r.stdout().strip();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        double connections = connectionRate(sandbox, timeout);
        double syns = Double.parseDouble(sent.join());
        long[] cpuAfter = cpu();
        double elapsed = (System.nanoTime() - t0) / 1e9;
        sleep(Duration.ofMillis(1500)); // the agent writes its metrics every second
        String after = sandbox.metrics();
        String kernel = "npm_flow_reports_total{from=\"kernel\"}";
        double reports = PromText.total(after, kernel) - PromText.total(before, kernel);
        double lost = PromText.total(after, "npm_flow_reports_lost_total") - PromText.total(before, "npm_flow_reports_lost_total");
        double idle = (cpuAfter[1] - cpuBefore[1]);
        double total = (cpuAfter[0] - cpuBefore[0]);
        return new Flood(syns, connections, total == 0 ? Double.NaN : 1 - idle / total, reports / elapsed, lost / elapsed);
    }

    private double connectionRate(BenchSandbox sandbox, Duration timeout) throws IOException {
        double rate = TcpRate.parse(sandbox.run(BenchManifests.CLIENT, tcprate.client(BenchManifests.SERVER_IP, BenchManifests.RATE_PORT,
                settings.seconds(), TcpRate.CONCURRENCY, DatapathRun.WARMUP_SECONDS, Duration.ofSeconds(1)), timeout));
        if (rate <= 0) {
            throw new IOException("the client could not connect to the server: the policies that admit it did not work");
        }
        return rate;
    }

    /** The machine's CPU time from /proc/stat's first line: {total, idle + iowait}, in ticks. */
    static long[] cpu() throws IOException {
        return cpu(Files.readAllLines(Path.of("/proc/stat")).get(0));
    }

    static long[] cpu(String line) {
        String[] f = line.trim().split("\\s+");
        long total = 0;
        for (int i = 1; i < f.length && i <= 8; i++) { // user nice system idle iowait irq softirq steal (guest is in user)
            total += Long.parseLong(f[i]);
        }
        return new long[] {total, Long.parseLong(f[4]) + Long.parseLong(f[5])};
    }

    private static double median(List<Flood> floods, java.util.function.ToDoubleFunction<Flood> field) {
        return median(floods.stream().map(f -> field.applyAsDouble(f)).toList());
    }

    static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    /**
     * The most kernel reports a second the flood may bring, after the first second's burst: eBPF's rate is per CPU
     * (the sandbox's node shares the machine's); a netfilter backend's is per log rule, and the flood meets one
     * (one pod, one direction, IPv4).
     */
    static int reportLimit(String backend) {
        return backend.equals("bpf") ? RATE * Runtime.getRuntime().availableProcessors() : RATE;
    }

    /** Both sides of each backend, side by side, and flows on against off. */
    static String table(List<Row> rows) {
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "flow verdicts' cost, %d policies selecting the server%n", POLICIES));
        b.append(String.format(Locale.ROOT, "%-16s %-5s %10s %8s %10s %14s %9s %10s %8s %10s %s%n", "backend", "flows", "conn/s", "Gbit/s",
                "flood SYN/s", "conn/s flooded", "CPU busy", "reports/s", "limit/s", "lost/s", "on vs off"));
        for (Row r : rows) {
            if (r.error() != null) {
                b.append(String.format(Locale.ROOT, "%-16s %-5s FAILED: %s%n", r.backend(), r.flows() ? "on" : "off", r.error()));
                continue;
            }
            String versus = "";
            if (r.flows()) {
                Row off = rows.stream().filter(o -> o.backend().equals(r.backend()) && !o.flows() && o.error() == null).findFirst().orElse(null);
                if (off != null) {
                    versus = String.format(Locale.ROOT, "conn/s %+.1f%% (paired %+.1f%%), flooded %+.1f%%", 100 * (r.connections() / off.connections() - 1),
                            100 * r.pairedChange(), 100 * (r.connectionsUnderFlood() / off.connectionsUnderFlood() - 1));
                }
            }
            b.append(String.format(Locale.ROOT, "%-16s %-5s %10.0f %8.2f %10.0f %14.0f %8.0f%% %10.0f %8d %10.0f %s%n", r.backend(),
                    r.flows() ? "on" : "off", r.connections(), r.gbit(), r.synsSent(), r.connectionsUnderFlood(), 100 * r.cpuBusy(),
                    r.reportsPerSecond(), reportLimit(r.backend()), r.lostPerSecond(), versus));
        }
        return b.toString();
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void say(String format, Object... args) {
        synchronized (progress) {
            progress.println("# " + String.format(Locale.ROOT, format, args));
            progress.flush();
        }
    }
}
