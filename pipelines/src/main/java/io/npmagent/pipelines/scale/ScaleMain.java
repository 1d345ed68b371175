package io.npmagent.pipelines.scale;

import io.npmagent.agent.backend.Backends;
import io.npmagent.iptables.exec.ProcessRunner;
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
        List<String> chosen = backends != null ? backends : List.of("iptables-nft", "iptables-legacy", "nft");
        List<ScaleResult> results = new ArrayList<>();
        PrintStream out = System.out;
        for (String backend : chosen) {
            if (!Backends.available(backend, ProcessRunner.host())) {
                out.println("# " + backend + ": tools not installed, skipped");
                continue;
            }
            for (boolean background : new boolean[] {false, true}) {
                out.printf("# %s %s: %d policies...%n", backend, background ? "background" : "foreground", services);
                out.flush();
                ScaleResult r = Npm640.run(backend, background, services);
                results.add(r);
                out.printf(Locale.ROOT, "#   done in %.2f s (%d kernel writes, longest %.3f s)%n", r.totalSeconds(), r.kernelWrites(),
                        r.maxRestoreSeconds());
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

    static String table(List<ScaleResult> results) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format("%-16s %-11s %7s %10s %9s %12s %10s %10s %10s%n",
                "backend", "mode", "netpols", "total s", "speedup", "max write s", "p50 s", "p99 s", "writes"));
        for (ScaleResult r : results) {
            double foreground = results.stream()
                    .filter(f -> f.backend().equals(r.backend()) && f.mode().equals("foreground"))
                    .mapToDouble(ScaleResult::totalSeconds).findFirst().orElse(Double.NaN);
            sb.append(String.format(Locale.ROOT, "%-16s %-11s %7d %10.2f %8.1fx %12.3f %10.3f %10.3f %10d%n",
                    r.backend(), r.mode(), r.netpols(), r.totalSeconds(), foreground / r.totalSeconds(), r.maxRestoreSeconds(),
                    r.p50Seconds(), r.p99Seconds(), r.kernelWrites()));
        }
        return sb.toString();
    }
}
