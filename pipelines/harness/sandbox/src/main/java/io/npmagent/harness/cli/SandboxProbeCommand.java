package io.npmagent.harness.cli;

import com.google.gson.GsonBuilder;
import io.npmagent.harness.sandbox.Convergence;
import io.npmagent.harness.sandbox.Prober;
import io.npmagent.harness.sandbox.Sandbox;
import io.npmagent.harness.sandbox.SandboxLifecycle;
import io.npmagent.harness.sandbox.ServiceTargets;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import io.npmagent.agent.cli.ExitCodes;
import io.npmagent.agent.cli.Main;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code sandbox probe}: waits (bounded) until the agent reports the manifest directory as it is now
 * applied and kube-proxy has programmed every Service's backends, then tries every ordered pair of
 * distinct pods on every port and protocol the destination serves, in both families where both pods
 * have one, and every Service port from every pod through the ClusterIP of each family. {@code --output
 * json} prints the contract of DESIGN.md: {@code {"converged": true, "results": [{"from", "to", "port",
 * "protocol", "allowed"}]}}, each result also naming its {@code family}, an {@code error} when the probe
 * could not give a verdict, and through a Service {@code "service": "NS/NAME"} with the Service's port
 * and {@code to} the backend pod when it has exactly one (else null). Exit 0 after probing, 5 when the
 * sandbox did not converge in time.
 */
@Command(name = "probe", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Wait until the sandbox applied its manifests, then try every pod pair on every served port.")
final class SandboxProbeCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    SandboxName name;

    @Option(names = "--output", defaultValue = "table", paramLabel = "FORMAT", description = "json or table (default: ${DEFAULT-VALUE}).")
    String output;

    @Option(names = "--wait-seconds", defaultValue = "30", paramLabel = "S", description = "How long to wait for convergence.")
    long waitSeconds;

    @Option(names = "--timeout-ms", defaultValue = "1000", paramLabel = "MS",
            description = "How long a probe waits for a connection or an echo before calling it denied.")
    long timeoutMs;

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        if (!output.equals("json") && !output.equals("table")) {
            spec.commandLine().getErr().println("npm-agent sandbox probe: --output is json or table, not " + output);
            return ExitCodes.USAGE;
        }
        Sandbox sandbox = name.sandbox();
        List<ServiceTargets.Target> services;
        try {
            Instant start = Instant.now();
            Convergence.await(sandbox, Duration.ofSeconds(waitSeconds));
            services = ServiceTargets.await(sandbox, Duration.ofSeconds(waitSeconds).minus(Duration.between(start, Instant.now())));
        } catch (Convergence.NotConverged e) {
            spec.commandLine().getErr().println("npm-agent sandbox probe: " + e.getMessage());
            if (output.equals("json")) {
                out.println("{\"converged\": false, \"results\": []}");
            }
            return ExitCodes.NOT_CONVERGED;
        }
        if (!SandboxLifecycle.daemonAlive(sandbox)) {
            spec.commandLine().getErr().println("npm-agent sandbox probe: the agent of sandbox " + sandbox.name()
                    + " is not running; probing what it left in the kernel");
        }
        List<Prober.Result> results = Prober.probeAll(sandbox, Duration.ofMillis(timeoutMs), services);
        if (output.equals("json")) {
            out.println(json(results));
        } else {
            out.print(table(results));
        }
        out.flush();
        return ExitCodes.OK;
    }

    static String json(List<Prober.Result> results) {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (Prober.Result r : results) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("from", r.from());
            row.put("to", r.to());
            if (r.service() != null) {
                row.put("service", r.service());
            }
            row.put("port", r.port());
            row.put("protocol", r.protocol());
            row.put("family", r.family());
            row.put("allowed", r.allowed());
            if (r.error() != null) {
                row.put("error", r.error());
            }
            rows.add(row);
        }
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("converged", true);
        doc.put("results", rows);
        return new GsonBuilder().disableHtmlEscaping().serializeNulls().create().toJson(doc); // "to": null through a Service of many pods
    }

    /** One block per family and port: rows are sources, columns destinations; '.' allowed, 'X' denied, '!' error. */
    static String table(List<Prober.Result> results) {
        TreeSet<String> pods = new TreeSet<>();
        TreeSet<String> sources = new TreeSet<>();
        Map<String, Map<String, Character>> blocks = new LinkedHashMap<>();
        for (Prober.Result r : results) {
            // Through a Service, the column is the Service (and its one backend, if it has one).
            String to = r.service() == null ? r.to() : "svc " + r.service() + (r.to() == null ? "" : " -> " + r.to());
            pods.add(r.from());
            sources.add(r.from());
            pods.add(to);
            String block = r.family() + " " + r.protocol() + "/" + r.port();
            blocks.computeIfAbsent(block, k -> new LinkedHashMap<>())
                    .put(r.from() + " " + to, r.error() != null ? '!' : r.allowed() ? '.' : 'X');
        }
        List<String> names = new ArrayList<>(pods);
        int width = names.stream().mapToInt(String::length).max().orElse(4) + 6;
        StringBuilder sb = new StringBuilder();
        sb.append("pods:\n");
        for (int i = 0; i < names.size(); i++) {
            sb.append(String.format("  %2d %s%n", i + 1, names.get(i)));
        }
        int allowed = 0;
        int denied = 0;
        int errors = 0;
        for (Map.Entry<String, Map<String, Character>> block : new TreeMap<>(blocks).entrySet()) {
            sb.append('\n').append(String.format("%-" + width + "s", block.getKey()));
            for (int i = 0; i < names.size(); i++) {
                sb.append(String.format("%3d", i + 1));
            }
            sb.append('\n');
            for (int i = 0; i < names.size(); i++) {
                if (!sources.contains(names.get(i))) {
                    continue; // a Service is a destination only
                }
                sb.append(String.format("%-" + width + "s", String.format("%2d %s", i + 1, names.get(i))));
                for (String to : names) {
                    Character c = block.getValue().get(names.get(i) + " " + to);
                    sb.append("  ").append(c == null ? '-' : c);
                    if (c != null) {
                        allowed += c == '.' ? 1 : 0;
                        denied += c == 'X' ? 1 : 0;
                        errors += c == '!' ? 1 : 0;
                    }
                }
                sb.append('\n');
            }
        }
        sb.append(String.format("%n%d allowed, %d denied%s ('.' allowed, 'X' denied, '-' not served)%n", allowed, denied,
                errors == 0 ? "" : ", " + errors + " errors ('!')"));
        return sb.toString();
    }
}
