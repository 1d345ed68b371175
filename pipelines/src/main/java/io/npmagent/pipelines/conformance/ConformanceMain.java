package io.npmagent.pipelines.conformance;

import io.npmagent.agent.backend.Backends;
import io.npmagent.dataplane.exec.ProcessRunner;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code pipelines/conformance}: every case under {@code pipelines/conformance/cases}, one after another
 * on one sandbox per backend (a real API server, two nodes by default, kube-proxy and the agent on its
 * informers on each; the pods spread over the nodes, so every case has pairs on one node and pairs
 * across nodes, directly and through Services), with real packets, then the DNS case ({@link DnsCase}: a
 * lookup through kube-dns under default-deny egress plus allow-DNS) on the same sandbox; a pass/fail
 * table and the closing line {@code N passed, M failed}. Two backends at a time, each on a sandbox of its own.
 */
@Command(name = "conformance", mixinStandardHelpOptions = true,
        description = "Run the NetworkPolicy conformance cases with real packets on every installed backend.")
public final class ConformanceMain implements Callable<Integer> {
    private static final List<String> BACKENDS = List.of("bpf", "iptables-nft", "iptables-legacy", "nft");

    @Option(names = "--dir", defaultValue = "pipelines/conformance", paramLabel = "DIR",
            description = "Where model.yaml and cases/ are (default: ${DEFAULT-VALUE}).")
    Path dir;

    @Option(names = "--backend", paramLabel = "NAME", description = "Only these backends (default: every one installed).")
    List<String> backends;

    @Option(names = "--kube-proxy-mode", defaultValue = "iptables", paramLabel = "MODE",
            description = "The sandbox's kube-proxy mode: iptables (default) or nftables.")
    String kubeProxyMode;

    @Option(names = "--case", paramLabel = "TEXT", description = "Only cases whose name contains TEXT (--case dns: the DNS case).")
    String only;

    @Option(names = "--nodes", defaultValue = "2", paramLabel = "N",
            description = "Nodes per sandbox, 1 to 4 (default: ${DEFAULT-VALUE}); the model's pods are spread over them round-robin.")
    int nodes;

    public static void main(String[] args) {
        System.exit(new CommandLine(new ConformanceMain()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        PrintStream out = System.out;
        ConformanceModel model = CaseLoader.loadModel(dir.resolve("model.yaml"));
        List<ConformanceCase> cases = new ArrayList<>();
        for (ConformanceCase c : CaseLoader.loadCases(dir.resolve("cases"))) {
            if (only == null || c.name().contains(only)) {
                cases.add(c);
            }
        }
        boolean dns = only == null || DnsCase.NAME.contains(only);
        List<String> names = new ArrayList<>(cases.stream().map(ConformanceCase::name).toList());
        if (dns) {
            names.add(DnsCase.NAME);
        }
        List<String> chosen = new ArrayList<>();
        for (String b : backends != null ? backends : BACKENDS) {
            if (Backends.supported(b, ProcessRunner.host())) {
                chosen.add(b);
            } else {
                out.println("# " + b + ": tools or kernel features missing, not run");
                if (backends != null || "true".equals(System.getenv("CI"))) {
                    return 2; // asked for, or CI, where a backend that cannot run is a failure, never a skip
                }
            }
        }
        out.printf("# %d cases on %s, %d node%s each%n", names.size(), String.join(", ", chosen), nodes, nodes == 1 ? "" : "s");
        // Two backends at a time: each sandbox is a whole cluster (etcd, kube-apiserver, controller manager,
        // kube-proxy, the agent) whose cases mostly wait (on convergence, on denied probes' timeouts); four at
        // once on two cores starve the pods' servers past the probe's timeout, which would read as denials.
        ExecutorService pool = Executors.newFixedThreadPool(2);
        Map<String, Future<List<CaseResult>>> runs = new TreeMap<>();
        for (String backend : chosen) {
            runs.put(backend, pool.submit(() -> {
                List<CaseResult> results = new ArrayList<>();
                try (SandboxCaseRun node = SandboxCaseRun.up(model, backend, kubeProxyMode, nodes)) {
                    for (ConformanceCase c : cases) {
                        results.add(report(out, node.run(c)));
                    }
                    if (dns) { // after the model cases (it leaves no policy behind either)
                        results.add(report(out, node.runDns()));
                    }
                }
                return results;
            }));
        }
        Map<String, List<CaseResult>> byBackend = new TreeMap<>();
        for (Map.Entry<String, Future<List<CaseResult>>> e : runs.entrySet()) {
            byBackend.put(e.getKey(), e.getValue().get());
        }
        pool.shutdown();
        out.println();
        out.print(table(names, byBackend));
        int passed = 0;
        int failed = 0;
        long skipped = 0;
        for (List<CaseResult> rs : byBackend.values()) {
            for (CaseResult r : rs) {
                if (r.passed()) {
                    passed++;
                } else {
                    failed++;
                    out.println();
                    out.println("FAIL " + r.backend() + " " + r.name() + ":");
                    r.wrong().stream().limit(20).forEach(w -> out.println("  " + w));
                    if (r.wrong().size() > 20) {
                        out.println("  ... and " + (r.wrong().size() - 20) + " more");
                    }
                }
                skipped += r.skipped();
            }
        }
        out.println();
        if (skipped > 0) {
            out.println(skipped + " SCTP probes skipped (this kernel has no SCTP sockets): neither passed nor failed");
        }
        out.println(passed + " passed, " + failed + " failed");
        return failed == 0 && passed > 0 ? 0 : 1;
    }

    private static CaseResult report(PrintStream out, CaseResult r) {
        synchronized (out) {
            out.printf(Locale.ROOT, "# %-16s %-58s %s (%.1f s)%n", r.backend(), r.name(), r.passed() ? "pass" : "FAIL", r.seconds());
        }
        return r;
    }

    static String table(List<String> names, Map<String, List<CaseResult>> byBackend) {
        StringBuilder sb = new StringBuilder(String.format("%-58s", "case"));
        byBackend.keySet().forEach(b -> sb.append(String.format(" %-16s", b)));
        sb.append('\n');
        for (int i = 0; i < names.size(); i++) {
            sb.append(String.format("%-58s", names.get(i)));
            for (List<CaseResult> rs : byBackend.values()) {
                CaseResult r = rs.get(i);
                String cell = r.passed() ? "pass" : "FAIL(" + r.wrong().size() + ")";
                sb.append(String.format(" %-16s", cell + (r.skipped() > 0 ? " +" + r.skipped() + " skip" : "")));
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    /** One case on one backend: whether every checked probe matched, what did not, and SCTP probes skipped. */
    record CaseResult(String name, String backend, List<String> wrong, long checked, long skipped, double seconds) {
        boolean passed() {
            return wrong.isEmpty() && checked > 0;
        }
    }
}
