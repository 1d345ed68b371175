package io.npmagent.pipelines.datapath;

import com.google.gson.GsonBuilder;
import io.npmagent.agent.backend.Backends;
import io.npmagent.dataplane.exec.ProcessRunner;
import io.npmagent.pipelines.bench.NativeTool;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * {@code pipelines/datapath}: new TCP connections per second and bulk throughput between two sandbox
 * pods, with 0, 100 and 1,000 policies selecting the server, per backend, side by side. Points run one
 * after the other (never two sandboxes at once: they would share the cores and measure each other).
 */
@Command(name = "datapath", mixinStandardHelpOptions = true,
        description = "Measure new TCP connections per second and bulk throughput between sandbox pods, per backend and policy count.")
public final class DatapathMain implements Callable<Integer> {
    static final List<String> DEFAULT_BACKENDS = List.of("bpf", "iptables-nft", "nft");

    @Option(names = "--backend", paramLabel = "NAME", description = "Measure this backend (repeatable; default: bpf, iptables-nft, nft).")
    List<String> backends;

    @Option(names = "--policies", paramLabel = "N,N,...", split = ",", defaultValue = "0,100,1000",
            description = "Policy counts selecting the server (default: ${DEFAULT-VALUE}).")
    List<Integer> policies;

    @Option(names = "--seconds", paramLabel = "S", defaultValue = "10", description = "Seconds per measurement, after a 1 s warm-up (default: ${DEFAULT-VALUE}).")
    int seconds;

    @Option(names = "--repeat", paramLabel = "R", defaultValue = "3", description = "Measurements per point; the median is reported (default: ${DEFAULT-VALUE}).")
    int repeat;

    @Option(names = "--connections-only", description = "Measure new connections per second only, not throughput.")
    boolean connectionsOnly;

    @Option(names = "--big-tcp", description = "Measure BIG TCP instead, on the eBPF backend: without and with --big-tcp, IPv4 and IPv6, "
            + "throughput and CPU per Gbit between two pods, and a pod limited to " + BigTcpRun.LIMIT + ".")
    boolean bigTcp;

    @Option(names = "--flows", description = "Measure flow verdicts' cost instead: with " + FlowCostRun.POLICIES + " policies, flows off and on "
            + "side by side, new connections per second and throughput, then under a flood of denied SYNs from one pod (each to a new port): "
            + "the client's rate, the machine's CPU, flows recorded and reports lost a second.")
    boolean flows;

    @Option(names = "--json", paramLabel = "FILE", description = "Also write the results as JSON.")
    Path json;

    public static void main(String[] args) {
        System.exit(new CommandLine(new DatapathMain()).execute(args));
    }

    @Override
    public Integer call() throws IOException {
        PrintStream out = System.out;
        if (seconds < 1 || repeat < 1 || policies.stream().anyMatch(n -> n < 0)) {
            System.err.println("datapath: --seconds and --repeat are at least 1, policy counts at least 0");
            return 2;
        }
        if (!connectionsOnly && !ProcessRunner.host().available("iperf3")) {
            System.err.println("datapath: iperf3 is not installed (pipelines/install-deps iperf3), or measure with --connections-only");
            return 2;
        }
        if (bigTcp) {
            return bigTcp(out);
        }
        TcpRate tcprate;
        try {
            tcprate = TcpRate.build();
        } catch (NativeTool.BuildFailed e) {
            System.err.println("datapath: " + e.getMessage());
            return 2;
        }
        List<String> chosen = backends != null ? backends : DEFAULT_BACKENDS;
        if (flows) {
            return flowCost(out, tcprate, chosen);
        }
        String command = command(chosen);
        out.println("# reproduce: " + command);
        out.printf(Locale.ROOT, "# %d cores, kernel %s; other load on the machine shows in the figures%n",
                Runtime.getRuntime().availableProcessors(), System.getProperty("os.version"));
        DatapathRun run = new DatapathRun(tcprate, new DatapathRun.Settings(seconds, repeat, connectionsOnly), out);
        List<DatapathPoint> points = new ArrayList<>();
        for (String backend : chosen) {
            Optional<String> skip = skipReason(backend);
            if (skip.isPresent()) {
                out.println("# " + backend + ": skipped: " + skip.get());
                points.add(DatapathPoint.skipped(backend, skip.get()));
                continue;
            }
            for (int n : policies) {
                points.add(run.measure(backend, n, sandboxName(backend)));
            }
        }
        out.println();
        out.print(DatapathTable.text(points));
        if (json != null) {
            Files.writeString(json, DatapathTable.json(command, points));
            out.println("wrote " + json);
        }
        boolean measured = points.stream().anyMatch(DatapathPoint::ok);
        boolean sound = points.stream().allMatch(p -> p.status().equals("skipped") || p.ok() && p.enforcedAsExpected());
        return measured && sound ? 0 : 1;
    }

    private int flowCost(PrintStream out, TcpRate tcprate, List<String> chosen) throws IOException {
        out.println("# reproduce: pipelines/datapath --flows" + chosen.stream().map(b -> " --backend " + b).collect(Collectors.joining())
                + " --seconds " + seconds + " --repeat " + repeat + (connectionsOnly ? " --connections-only" : ""));
        out.printf(Locale.ROOT, "# %d cores, kernel %s; other load on the machine shows in the figures%n",
                Runtime.getRuntime().availableProcessors(), System.getProperty("os.version"));
        FlowCostRun run;
        try {
            run = new FlowCostRun(tcprate, new DatapathRun.Settings(seconds, repeat, connectionsOnly), out);
        } catch (NativeTool.BuildFailed e) {
            System.err.println("datapath: " + e.getMessage());
            return 2;
        }
        List<FlowCostRun.Row> rows = new ArrayList<>();
        for (String backend : chosen) {
            Optional<String> skip = skipReason(backend);
            if (skip.isPresent()) {
                out.println("# " + backend + ": skipped: " + skip.get());
                continue;
            }
            rows.addAll(run.measure(backend, sandboxName(backend)));
        }
        out.println();
        out.print(FlowCostRun.table(rows));
        if (json != null) {
            Files.writeString(json, new GsonBuilder().setPrettyPrinting().serializeSpecialFloatingPointValues().create().toJson(rows));
            out.println("wrote " + json);
        }
        return !rows.isEmpty() && rows.stream().allMatch(r -> r.error() == null) ? 0 : 1;
    }

    private int bigTcp(PrintStream out) throws IOException {
        out.println("# reproduce: pipelines/datapath --big-tcp --seconds " + seconds + " --repeat " + repeat);
        out.printf(Locale.ROOT, "# %d cores, kernel %s; other load on the machine shows in the figures%n",
                Runtime.getRuntime().availableProcessors(), System.getProperty("os.version"));
        List<BigTcpRun.Row> rows;
        try {
            rows = new BigTcpRun(seconds, repeat, out).measure(sandboxName("bpf"));
        } catch (IOException e) {
            throw e;
        } catch (Exception e) {
            System.err.println("datapath: " + e.getMessage());
            return 1;
        }
        out.println();
        out.print(BigTcpRun.table(rows));
        if (json != null) {
            Files.writeString(json, new GsonBuilder().setPrettyPrinting().create().toJson(rows));
            out.println("wrote " + json);
        }
        return 0;
    }

    /** Why {@code backend} cannot be measured here, if it cannot: unknown to this build, or its tools missing. */
    static Optional<String> skipReason(String backend) {
        if (!Backends.NAMES.contains(backend)) {
            return Optional.of("not a backend of this build (it has " + String.join(", ", Backends.NAMES) + ")");
        }
        if (!Backends.supported(backend, ProcessRunner.host())) {
            return Optional.of("not available on this machine (its tools or kernel features are missing)");
        }
        return Optional.empty();
    }

    /**
     * A sandbox name of our own: {@code dp-}, the backend, and this process's id, so two runs never share
     * one; at most 20 characters, as sandbox names must be.
     */
    static String sandboxName(String backend) {
        String shortName = backend.replace("iptables-", "ipt-").toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9-]", "-");
        String prefix = ("dp-" + shortName);
        return prefix.substring(0, Math.min(prefix.length(), 14)) + "-" + ProcessHandle.current().pid() % 100000;
    }

    /** The command line that runs the same measurement again, every option spelled out. */
    private String command(List<String> chosen) {
        return "pipelines/datapath" + chosen.stream().map(b -> " --backend " + b).collect(Collectors.joining())
                + " --policies " + policies.stream().map(String::valueOf).collect(Collectors.joining(","))
                + " --seconds " + seconds + " --repeat " + repeat + (connectionsOnly ? " --connections-only" : "");
    }
}
