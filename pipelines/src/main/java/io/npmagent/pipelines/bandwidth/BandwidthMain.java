package io.npmagent.pipelines.bandwidth;

import io.npmagent.dataplane.bandwidth.BandwidthAnnotations;
import io.npmagent.dataplane.exec.ProcessRunner;
import io.npmagent.pipelines.bench.NativeTool;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code pipelines/bandwidth}: the agent's EDT shaper against the CNI bandwidth plugin's TBF (same rate,
 * 25 ms latency) and against no limit, at {@code --rate} with {@code --streams} bulk TCP streams and a
 * request/response probe beside them: achieved rate, probe latency, retransmissions. Then the EDT
 * shaper's accuracy at each of {@code --accuracy} (one stream), for egress and ingress, with TBF's
 * beside it. Every point has a sandbox of its own, one after the other.
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

    @Option(names = "--json", paramLabel = "FILE", description = "Also write the results as JSON.")
    Path json;

    public static void main(String[] args) {
        System.exit(new CommandLine(new BandwidthMain()).execute(args));
    }

    @Override
    public Integer call() throws IOException {
        PrintStream out = System.out;
        if (seconds < 3 || streams < 1) {
            System.err.println("bandwidth: --seconds is at least 3, --streams at least 1");
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
        } catch (NativeTool.BuildFailed | IllegalArgumentException e) {
            System.err.println("bandwidth: " + e.getMessage());
            return 2;
        }
        String command = "pipelines/bandwidth --rate " + rate + " --streams " + streams + " --accuracy " + String.join(",", accuracy)
                + " --seconds " + seconds + (horizon == null ? "" : " --edt-horizon " + horizon);
        out.println("# reproduce: " + command);
        out.printf(Locale.ROOT, "# %d cores, kernel %s; other load on the machine shows in the figures%n",
                Runtime.getRuntime().availableProcessors(), System.getProperty("os.version"));
        String[] upOptions = horizon == null ? new String[0] : new String[] {"--edt-horizon", horizon};
        BandwidthRun run = new BandwidthRun(rrprobe, seconds, out);
        String sandbox = "bw-" + ProcessHandle.current().pid() % 100000;
        List<BandwidthPoint> points = new ArrayList<>();
        for (String shaper : List.of("none", "tbf", "edt")) {
            points.add(run.measure("latency", shaper, BandwidthRun.EGRESS, rate, shaper.equals("none") ? 0 : bits(rate), streams, true,
                    sandbox, upOptions));
        }
        for (String r : accuracy) {
            points.add(run.measure("accuracy", "edt", BandwidthRun.EGRESS, r, bits(r), 1, false, sandbox, upOptions));
            points.add(run.measure("accuracy", "edt", BandwidthRun.INGRESS, r, bits(r), 1, false, sandbox, upOptions));
            points.add(run.measure("accuracy", "tbf", BandwidthRun.EGRESS, r, bits(r), 1, false, sandbox, upOptions));
        }
        out.println();
        out.print(BandwidthTable.text(points));
        if (json != null) {
            Files.writeString(json, BandwidthTable.json(command, points));
            out.println("wrote " + json);
        }
        return points.stream().allMatch(BandwidthPoint::ok) ? 0 : 1;
    }

    private static long bits(String rate) {
        return BandwidthAnnotations.bitsPerSecond(rate);
    }
}
