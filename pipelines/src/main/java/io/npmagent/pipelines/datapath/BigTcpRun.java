package io.npmagent.pipelines.datapath;

import io.npmagent.bpf.libbpf.NetnsThread;
import io.npmagent.bpf.libbpf.Rtnetlink;
import io.npmagent.dataplane.bandwidth.BandwidthAnnotations;
import io.npmagent.pipelines.bench.BenchSandbox;
import io.npmagent.pipelines.bench.Iperf;
import io.npmagent.pipelines.bench.TempDir;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code pipelines/datapath --big-tcp}: BIG TCP on the eBPF backend, without and with {@code --big-tcp},
 * side by side: one TCP stream between two pods over IPv4 and over IPv6, unlimited (throughput, and the
 * machine's CPU time per Gbit carried: /proc/stat across the run, every core, softirq included) and from
 * a pod limited to {@value #LIMIT} egress (the rate it gets). One policy admits both clients to the
 * server, so every packet is judged. Every client runs on CPU 0 and the server on CPU 1 ({@link #pinned}). What the client's interface was raised to is printed beside.
 */
final class BigTcpRun {
    static final String LIMIT = "1G";
    private static final String NS = "big";
    private static final int PORT = 5201;
    private static final String SERVER_V4 = "10.79.0.10";
    private static final String SERVER_V6 = "fd00:79::10";
    /** After the sandbox is up, for kube-proxy's first syncs and the agent's first passes to finish. */
    private static final Duration SETTLE = Duration.ofSeconds(5);

    /** One row: a setting and a family, the medians of its runs and the interface limits the client had. */
    record Row(boolean bigTcp, String family, double gbit, double cpuMsPerGbit, double limitedMbit, double limitedMin, double limitedMax,
            long limitedRetransmits, long clientGso) {}

    /** Every run's figures of one family. */
    private static final class Samples {
        final List<Double> gbit = new ArrayList<>();
        final List<Double> cpu = new ArrayList<>();
        final List<Double> limited = new ArrayList<>();
        final List<Double> retransmits = new ArrayList<>();
    }

    private final int seconds;
    private final int repeat;
    private final PrintStream progress;

    BigTcpRun(int seconds, int repeat, PrintStream progress) {
        this.seconds = seconds;
        this.repeat = repeat;
        this.progress = progress;
    }

    /**
     * Both sandboxes up at once, without and with BIG TCP, and their runs interleaved (each repeat: each
     * family: off, then on), so the machine's drift over the minutes (other tenants' CPU steal moved this
     * VM's figures two-fold between runs) falls on both alike. The idle one costs the other its control
     * plane's background, about a twentieth of a core.
     */
    List<Row> measure(String sandboxName) throws Exception {
        try (TempDir offDir = TempDir.create("npm-bigtcp-"); TempDir onDir = TempDir.create("npm-bigtcp-")) {
            write(offDir.path());
            write(onDir.path());
            try (BenchSandbox off = BenchSandbox.up(sandboxName + "-o", offDir.path(), "bpf", 1);
                    BenchSandbox on = BenchSandbox.up(sandboxName + "-b", onDir.path(), "bpf", 1, "--big-tcp")) {
                Map<BenchSandbox, Map<String, Samples>> samples = new LinkedHashMap<>();
                for (BenchSandbox sandbox : List.of(off, on)) {
                    sandbox.startServer(NS + "/server", Iperf.server(PORT), Iperf.READY);
                    samples.put(sandbox, Map.of("IPv4", new Samples(), "IPv6", new Samples()));
                }
                Thread.sleep(SETTLE.toMillis());
                for (int i = 1; i <= repeat; i++) {
                    for (String family : List.of("IPv4", "IPv6")) {
                        for (BenchSandbox sandbox : List.of(off, on)) {
                            Samples s = samples.get(sandbox).get(family);
                            run(sandbox, family, s);
                            progress.printf(Locale.ROOT, "big tcp %s, %s, run %d/%d: %.2f Gbit/s, %.0f ms CPU per Gbit; limited to %s: %.1f Mbit/s, %.0f retransmits%n",
                                    sandbox == on ? "on" : "off", family, i, repeat, last(s.gbit), last(s.cpu), LIMIT, last(s.limited),
                                    last(s.retransmits));
                        }
                    }
                }
                List<Row> rows = new ArrayList<>();
                for (BenchSandbox sandbox : List.of(off, on)) {
                    for (String family : List.of("IPv4", "IPv6")) {
                        Samples s = samples.get(sandbox).get(family);
                        rows.add(new Row(sandbox == on, family, DatapathPoint.median(s.gbit), DatapathPoint.median(s.cpu), DatapathPoint.median(s.limited), Collections.min(s.limited),
                                Collections.max(s.limited), (long) DatapathPoint.median(s.retransmits), clientGso(sandbox, family)));
                    }
                }
                return rows;
            }
        }
    }

    /** One unlimited run (throughput, CPU) and one from the limited pod, to the server over {@code family}. */
    private void run(BenchSandbox sandbox, String family, Samples s) throws Exception {
        String server = family.equals("IPv4") ? SERVER_V4 : SERVER_V6;
        long before = busy();
        Iperf.Report r = Iperf.report(sandbox.run(NS + "/client", pinned(Iperf.client(server, PORT, seconds, 0)), timeout()));
        long after = busy();
        s.gbit.add(r.bitsPerSecond() / 1e9);
        s.cpu.add((after - before) * 10.0 / (r.bitsPerSecond() / 1e9 * seconds)); // jiffies are 10 ms (USER_HZ 100)
        Iperf.Report l = Iperf.report(sandbox.run(NS + "/limited", pinned(Iperf.client(server, PORT, seconds, 1)), timeout()));
        s.limited.add(l.bitsPerSecond() / 1e6);
        s.retransmits.add((double) l.retransmits());
    }

    private static double last(List<Double> xs) {
        return xs.get(xs.size() - 1);
    }

    static String table(List<Row> rows) {
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "%-8s %-6s %8s %16s %12s %18s %14s %12s%n", "big tcp", "family",
                "Gbit/s", "CPU ms per Gbit", "client GSO", "limited " + LIMIT + " Mbit/s", "(min-max)", "retransmits"));
        for (Row r : rows) {
            b.append(String.format(Locale.ROOT, "%-8s %-6s %8.2f %16.0f %12d %18.1f %14s %12d%n", r.bigTcp() ? "on" : "off", r.family(), r.gbit(),
                    r.cpuMsPerGbit(), r.clientGso(), r.limitedMbit(), String.format(Locale.ROOT, "%.0f-%.0f", r.limitedMin(), r.limitedMax()),
                    r.limitedRetransmits()));
        }
        b.append("medians; Gbit/s and CPU: one unlimited TCP stream, client on CPU 0, server on CPU 1; CPU: every core's busy time per Gbit carried\n");
        b.append("client GSO: the most the client's eth0 lets its TCP put in one packet (gso_ipv4_max_size for IPv4, gso_max_size for IPv6)\n");
        return b.toString();
    }

    /**
     * Client on CPU 0, server on CPU 1: unpinned, the same run gave 6 or 14 Gbit/s depending on where the
     * scheduler put the two (measured on 2 cores), which would swamp the difference measured.
     */
    private static List<String> pinned(List<String> argv) {
        List<String> out = new ArrayList<>(argv);
        out.addAll(List.of("--affinity", "0,1"));
        return out;
    }

    private Duration timeout() {
        return Duration.ofSeconds(seconds + 40L);
    }

    /** The client's own end's GSO limit for the family, read in its namespace. */
    private static long clientGso(BenchSandbox sandbox, String family) throws Exception {
        try (NetnsThread pod = NetnsThread.enter(sandbox.netns(NS + "/client"))) {
            Rtnetlink.Link link = pod.get(() -> Rtnetlink.link("eth0"));
            return family.equals("IPv4") ? link.gsoIpv4MaxSize() : link.gsoMaxSize();
        }
    }

    /**
     * Every core's busy jiffies from /proc/stat's {@code cpu} line: user, nice, system, irq and softirq.
     * Not idle or iowait, and not steal: time the hypervisor gave another tenant is no cost of ours.
     */
    private static long busy() throws IOException {
        String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
        return Long.parseLong(f[1]) + Long.parseLong(f[2]) + Long.parseLong(f[3]) + Long.parseLong(f[6]) + Long.parseLong(f[7]);
    }

    private static void write(Path dir) throws IOException {
        Files.writeString(dir.resolve("big.yaml"), """
                apiVersion: v1
                kind: Namespace
                metadata:
                  name: big
                ---
                %s---
                %s---
                %s---
                apiVersion: networking.k8s.io/v1
                kind: NetworkPolicy
                metadata:
                  name: server-admits-clients
                  namespace: big
                spec:
                  podSelector:
                    matchLabels: {app: server}
                  policyTypes: [Ingress]
                  ingress:
                    - from:
                        - podSelector:
                            matchLabels: {role: client}
                      ports:
                        - {protocol: TCP, port: %d}
                """.formatted(pod("server", "app: server", 10, ""), pod("client", "role: client", 20, ""),
                pod("limited", "role: client", 30, "  annotations:\n    " + BandwidthAnnotations.EGRESS + ": \"" + LIMIT + "\"\n"), PORT));
    }

    private static String pod(String name, String label, int host, String annotations) {
        return """
                apiVersion: v1
                kind: Pod
                metadata:
                  name: %1$s
                  namespace: big
                  labels: {%2$s}
                %5$sspec:
                  containers:
                  - name: main
                    image: bench
                status:
                  podIP: 10.79.0.%3$d
                  podIPs:
                  - ip: 10.79.0.%3$d
                  - ip: fd00:79::%4$d
                """.formatted(name, label, host, host, annotations);
    }
}
