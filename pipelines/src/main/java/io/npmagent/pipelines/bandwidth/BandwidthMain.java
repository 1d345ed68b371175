package io.npmagent.pipelines.bandwidth;

import io.npmagent.dataplane.bandwidth.BandwidthAnnotations;
import io.npmagent.dataplane.bandwidth.FlowControl;
import io.npmagent.dataplane.exec.ProcessRunner;
import io.npmagent.pipelines.bench.BenchJson;
import io.npmagent.pipelines.bench.NativeTool;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code pipelines/bandwidth}: the agent's EDT shaper against the CNI bandwidth plugin's TBF (same rate,
 * 25 ms latency) and against no limit, at {@code --rate} with {@code --streams} bulk TCP streams and a
 * request/response probe beside them: achieved rate, probe latency, retransmissions. Then the EDT
 * shaper's accuracy at each of {@code --accuracy} (one stream), for egress and ingress, with TBF's
 * beside it. Then the shaper's flow control: a small flow beside bulk flows at each of {@code
 * --protection}, per mode ({@link ProtectionRun}), and a flow's start at each of {@code --start},
 * packets only against the agent's settings ({@link StartRun}). Every point has a sandbox of its own,
 * one after the other.
 */
@Command(name = "bandwidth", mixinStandardHelpOptions = true,
        description = "Compare the eBPF EDT shaper with TBF and no limit: rate, request/response latency, retransmissions, accuracy.")
public final class BandwidthMain implements Callable<Integer> {
    @Option(names = "--rate", paramLabel = "RATE", defaultValue = "100M", description = "The latency test's limit (default: ${DEFAULT-VALUE}).")
    String rate;

    @Option(names = "--streams", paramLabel = "N", defaultValue = "4", description = "Bulk TCP streams in the latency test (default: ${DEFAULT-VALUE}).")
    int streams;

    @Option(names = "--accuracy", paramLabel = "RATE,...", split = ",", defaultValue = "10M,100M,1G",
            description = "Limits of the accuracy test (default: ${DEFAULT-VALUE}).")
    List<String> accuracy;

    @Option(names = "--seconds", paramLabel = "S", defaultValue = "10",
            description = "Seconds per measurement, after a " + BandwidthRun.WARMUP_SECONDS + " s warm-up (default: ${DEFAULT-VALUE}).")
    int seconds;

    @Option(names = "--edt-horizon", paramLabel = "TIME", description = "Passed to sandbox up (default: the agent's).")
    String horizon;

    @Option(names = "--ecn-threshold", paramLabel = "TIME", description = "Passed to sandbox up (default: the agent's).")
    String ecnThreshold;

    @Option(names = "--tests", paramLabel = "TEST,...", split = ",", defaultValue = "latency,accuracy,protection,start",
            description = "Which tests: latency, accuracy, protection, start (default: ${DEFAULT-VALUE}).")
    List<String> tests;

    @Option(names = "--protection", paramLabel = "RATE,...", split = ",", defaultValue = "100M,1G",
            description = "Limits of the protection test: a small flow beside bulk flows, per flow control (default: ${DEFAULT-VALUE}).")
    List<String> protection;

    @Option(names = "--bulk-flows", paramLabel = "N", defaultValue = "4", description = "Bulk flows in the protection test (default: ${DEFAULT-VALUE}).")
    int bulkFlows;

    @Option(names = "--start", paramLabel = "RATE,...", split = ",", defaultValue = "10M,50M,100M,1G",
            description = "Limits of the start test: a flow's first seconds, packets only (1 s horizon) against the default (protect: paced) and back-pressure "
                    + "(200ms horizon, ECN 20ms, or --edt-horizon and --ecn-threshold) (default: ${DEFAULT-VALUE}).")
    List<String> start;

    /** The start test's baseline: the shaper as it was before flow control (packets only, 1 s horizon, ECN marks from 100 ms). */
    static final List<String> PACKETS_ONLY = List.of("--edt-flow-control", "off", "--edt-horizon", "1s", "--ecn-threshold", "100ms");
    /** The agent's default: protection and pacing at the socket, the same horizon and ECN threshold. */
    static final List<String> PROTECT = List.of("--edt-flow-control", "protect", "--edt-horizon", "1s", "--ecn-threshold", "100ms");
    /** The start test's candidate, unless --edt-horizon or --ecn-threshold say otherwise: back-pressure with a short horizon. */
    static final String BACK_PRESSURE_HORIZON = "200ms";
    static final String BACK_PRESSURE_ECN = "20ms";

    @Option(names = "--json", paramLabel = "FILE", description = "Also write the results as JSON.")
    Path json;

    public static void main(String[] args) {
        System.exit(new CommandLine(new BandwidthMain()).execute(args));
    }

    @Override
    public Integer call() throws IOException {
        PrintStream out = System.out;
        if (seconds < 3 || streams < 1 || bulkFlows < 1) {
            System.err.println("bandwidth: --seconds is at least 3, --streams and --bulk-flows at least 1");
            return 2;
        }
        if (!TESTS.containsAll(tests)) {
            System.err.println("bandwidth: --tests are some of " + String.join(", ", TESTS) + ", not " + String.join(",", tests));
            return 2;
        }
        if (!ProcessRunner.host().available("iperf3")) {
            System.err.println("bandwidth: iperf3 is not installed (pipelines/install-deps iperf3)");
            return 2;
        }
        RrProbe rrprobe;
        try {
            rrprobe = RrProbe.build();
            bits(rate);
            accuracy.forEach(BandwidthMain::bits);
            protection.forEach(BandwidthMain::bits);
            start.forEach(BandwidthMain::bits);
        } catch (NativeTool.BuildFailed | IllegalArgumentException e) {
            System.err.println("bandwidth: " + e.getMessage());
            return 2;
        }
        String command = "pipelines/bandwidth --tests " + String.join(",", tests) + " --rate " + rate + " --streams " + streams
                + " --accuracy " + String.join(",", accuracy) + " --protection " + String.join(",", protection) + " --bulk-flows " + bulkFlows
                + " --start " + String.join(",", start) + " --seconds " + seconds + (horizon == null ? "" : " --edt-horizon " + horizon)
                + (ecnThreshold == null ? "" : " --ecn-threshold " + ecnThreshold);
        out.println("# reproduce: " + command);
        out.printf(Locale.ROOT, "# %d cores, kernel %s; other load on the machine shows in the figures%n",
                Runtime.getRuntime().availableProcessors(), System.getProperty("os.version"));
        List<String> agentOptions = new ArrayList<>();
        if (horizon != null) {
            agentOptions.addAll(List.of("--edt-horizon", horizon));
        }
        if (ecnThreshold != null) {
            agentOptions.addAll(List.of("--ecn-threshold", ecnThreshold));
        }
        String[] upOptions = agentOptions.toArray(String[]::new);
        BandwidthRun run = new BandwidthRun(rrprobe, seconds, out);
        String sandbox = "bw-" + ProcessHandle.current().pid() % 100000;
        List<BandwidthPoint> points = new ArrayList<>();
        if (tests.contains("latency")) {
            for (String shaper : List.of("none", "tbf", "edt")) {
                points.add(run.measure("latency", shaper, BandwidthRun.EGRESS, rate, shaper.equals("none") ? 0 : bits(rate), streams, true,
                        sandbox, upOptions));
            }
        }
        if (tests.contains("accuracy")) {
            for (String r : accuracy) {
                points.add(run.measure("accuracy", "edt", BandwidthRun.EGRESS, r, bits(r), 1, false, sandbox, upOptions));
                points.add(run.measure("accuracy", "edt", BandwidthRun.INGRESS, r, bits(r), 1, false, sandbox, upOptions));
                points.add(run.measure("accuracy", "tbf", BandwidthRun.EGRESS, r, bits(r), 1, false, sandbox, upOptions));
            }
        }
        List<ProtectionRun.Point> protectionPoints = new ArrayList<>();
        if (tests.contains("protection")) {
            ProtectionRun flows = new ProtectionRun(rrprobe, seconds, out);
            for (String r : protection) {
                for (FlowControl f : FlowControl.values()) {
                    protectionPoints.add(flows.measure(r, bits(r), f.label(), bulkFlows, sandbox, agentOptions));
                }
            }
        }
        List<StartRun.Point> startPoints = new ArrayList<>();
        if (tests.contains("start")) {
            StartRun starts = new StartRun(seconds, out);
            String h = horizon == null ? BACK_PRESSURE_HORIZON : horizon;
            String ecn = ecnThreshold == null ? BACK_PRESSURE_ECN : ecnThreshold;
            List<String> backPressure = List.of("--edt-flow-control", "back-pressure", "--edt-horizon", h, "--ecn-threshold", ecn);
            for (String r : start) {
                startPoints.add(starts.measure(r, bits(r), "packets only (off, 1s)", sandbox, PACKETS_ONLY));
                startPoints.add(starts.measure(r, bits(r), "paced (protect, 1s)", sandbox, PROTECT));
                startPoints.add(starts.measure(r, bits(r), "back-pressure (" + h + ", ECN " + ecn + ")", sandbox, backPressure));
            }
        }
        out.println();
        if (!points.isEmpty()) {
            out.print(BandwidthTable.text(points));
        }
        if (!protectionPoints.isEmpty()) {
            out.println("\nA small flow (10 KB requests and answers) beside " + bulkFlows + " bulk flows (1 MB requests), CUBIC, under the client's "
                    + "egress limit, per flow control; drops % over the run, small flow's retransmissions (rtx):");
            out.print(FlowTables.protection(protectionPoints));
        }
        if (!startPoints.isEmpty()) {
            out.println("\nOne CUBIC flow from a fresh pod, nothing omitted: bytes above the limit in its first second, its first "
                    + StartRun.FIRST_SECONDS + " s, the whole " + Math.max(seconds, StartRun.FIRST_SECONDS) + " s:");
            out.print(FlowTables.start(startPoints));
        }
        if (json != null) {
            List<Map<String, Object>> rows = new ArrayList<>(BandwidthTable.rows(points));
            rows.addAll(FlowTables.json(protectionPoints, startPoints));
            Files.writeString(json, BenchJson.document(command, rows));
            out.println("wrote " + json);
        }
        return points.stream().allMatch(BandwidthPoint::ok) && protectionPoints.stream().allMatch(ProtectionRun.Point::ok)
                && startPoints.stream().allMatch(StartRun.Point::ok) ? 0 : 1;
    }

    static final List<String> TESTS = List.of("latency", "accuracy", "protection", "start");

    private static long bits(String rate) {
        return BandwidthAnnotations.bitsPerSecond(rate);
    }
}
