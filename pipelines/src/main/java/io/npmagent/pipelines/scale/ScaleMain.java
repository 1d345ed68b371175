package io.npmagent.pipelines.scale;

import io.npmagent.agent.backend.Backends;
import io.npmagent.iptables.exec.ProcessRunner;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code pipelines/scale}: runs a scenario on every available backend, foreground and background, side by side. */
@Command(name = "scale", mixinStandardHelpOptions = true,
        description = "Drive the agent's dataplane through a scale scenario and print the figures.")
public final class ScaleMain implements Callable<Integer> {
    @Option(names = "--scenario", required = true, description = "npm640")
    String scenario;

    @Option(names = "--json", paramLabel = "FILE", description = "Also write the results as JSON.")
    Path json;

    @Option(names = "--services", description = "Services in the npm640 scenario (default 640).")
    int services = 640;

    @Option(names = "--repeat", description = "Runs of each batched measurement; the median is reported (default 5).")
    int repeat = 5;

    @Option(names = "--warmup", description = "Untimed batched runs per backend before it is measured (default 5).")
    int warmup = 5;

    @Option(names = "--backend", description = "Only these backends (default: every one installed).")
    List<String> backends;

    public static void main(String[] args) {
        System.exit(new CommandLine(new ScaleMain()).execute(args));
    }

    @Override
    public Integer call() throws IOException {
        if (!scenario.equals("npm640")) {
            System.err.println("scale: unknown scenario " + scenario + " (npm640)");
            return 2;
        }
        List<String> chosen = backends != null ? backends : List.of("bpf", "iptables-nft", "iptables-legacy", "nft");
        List<ScaleResult> results = new ArrayList<>();
        PrintStream out = System.out;
        for (String backend : chosen) {
            if (!Backends.supported(backend, ProcessRunner.host())) {
                out.println("# " + backend + ": tools or kernel features missing, skipped");
                continue;
            }
            // Untimed: the JIT compiles this backend's path first, as in an agent that has been running
            // for a while (a cold JVM interprets the first batches and would measure itself, not the backend).
            out.printf("# %s: %d warm-up run(s)...%n", backend, warmup);
            out.flush();
            for (int i = 0; i < warmup; i++) {
                Npm640.run(backend, true, services);
            }
            for (boolean background : new boolean[] {false, true}) {
                // The batched runs are short and jittery on a small machine: the median of a few.
                int runs = background ? repeat : 1;
                out.printf("# %s %s: %d policies, %d run(s)...%n", backend, background ? "background" : "foreground", services, runs);
                out.flush();
                List<ScaleResult> tries = new ArrayList<>();
                for (int i = 0; i < runs; i++) {
                    tries.add(Npm640.run(backend, background, services));
                }
                tries.sort(Comparator.comparingDouble(ScaleResult::totalSeconds));
                ScaleResult r = tries.get(tries.size() / 2);
                results.add(r);
                out.printf(Locale.ROOT, "#   %s s; median %.3f s (%d transactions, longest %.3f s)%n",
                        String.join(" ", tries.stream().map(t -> String.format(Locale.ROOT, "%.3f", t.totalSeconds())).toList()),
                        r.totalSeconds(), r.transactions(), r.longestApplySeconds());
            }
        }
        out.println();
        out.println(table(results));
        if (json != null) {
            StringBuilder sb = new StringBuilder("{\"results\": [\n");
            for (int i = 0; i < results.size(); i++) {
                sb.append("  ").append(results.get(i).json()).append(i + 1 < results.size() ? ",\n" : "\n");
            }
            sb.append("]}\n");
            Files.writeString(json, sb.toString());
            out.println("wrote " + json);
        }
        return 0;
    }

    /**
     * One row per backend and mode: the total, its speedup over the same backend in the foreground, and
     * over the batched iptables-nft run (the fallback an operator would otherwise have).
     */
    static String table(List<ScaleResult> results) {
        double batchedIptablesNft = results.stream()
                .filter(f -> f.backend().equals("iptables-nft") && f.mode().equals("background"))
                .mapToDouble(ScaleResult::totalSeconds).findFirst().orElse(Double.NaN);
        StringBuilder sb = new StringBuilder();
        sb.append(String.format("%-16s %-11s %7s %10s %9s %13s %12s %10s %10s %6s%n",
                "backend", "mode", "netpols", "total s", "speedup", "vs ipt-nft bg", "longest tx s", "p50 s", "p99 s", "txs"));
        for (ScaleResult r : results) {
            double foreground = results.stream()
                    .filter(f -> f.backend().equals(r.backend()) && f.mode().equals("foreground"))
                    .mapToDouble(ScaleResult::totalSeconds).findFirst().orElse(Double.NaN);
            sb.append(String.format(Locale.ROOT, "%-16s %-11s %7d %10.3f %8.1fx %12.1fx %12.3f %10.3f %10.3f %6d%n",
                    r.backend(), r.mode(), r.netpols(), r.totalSeconds(), foreground / r.totalSeconds(),
                    batchedIptablesNft / r.totalSeconds(), r.longestApplySeconds(), r.p50Seconds(), r.p99Seconds(), r.transactions()));
        }
        return sb.toString();
    }
}
