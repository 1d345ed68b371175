package io.npmagent.harness.sandbox;

import io.npmagent.harness.cli.HarnessMain;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.Gson;
import com.google.gson.JsonObject;
import io.npmagent.agent.cli.CliRun;
import io.npmagent.dataplane.bandwidth.CongestionAnnotation;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pods' congestion controls in a sandbox on the eBPF backend, with real connections: every process of a
 * pod runs in the pod's cgroup; a pod annotated {@code npm-agent.io/tcp-congestion} has that algorithm on
 * the connections it opens and on those it accepts, IPv4 and IPv6, while its unannotated neighbour keeps
 * its namespace's default; a change reaches the connections made after it and leaves the open ones as
 * they were; a value the kernel does not offer is a problem naming pod, annotation and value, and the
 * pod's connections keep the default. The kernel's own answer is read per socket ({@code TCP_CONGESTION})
 * and with {@code ss -ti}.
 */
class PodCongestionKernelTest {
    private static final Gson GSON = new Gson();
    private static final int PORT = 9000;
    private static final Map<String, String> V4 = Map.of("a", "10.70.0.1", "b", "10.70.0.2", "c", "10.70.0.3");
    private static final Map<String, String> V6 = Map.of("a", "fd70::1", "b", "fd70::2", "c", "fd70::3");

    private final List<Process> holders = new ArrayList<>();
    private String name;

    @TempDir
    Path dir;

    @BeforeEach
    void require() {
        KernelTestSupport.require("python3", "setsid", "ss", "bpftool");
    }

    @AfterEach
    void down() {
        holders.forEach(Process::destroyForcibly);
        if (name != null) {
            HarnessMain.run("sandbox", "down", "--name", name);
        }
    }

    private void write(String pod, String congestion) throws IOException {
        String annotations = congestion == null ? "" : ", annotations: {" + CongestionAnnotation.ANNOTATION + ": " + congestion + "}";
        Files.writeString(dir.resolve(pod + ".yaml"), "apiVersion: v1\nkind: Pod\nmetadata: {name: " + pod + ", namespace: x" + annotations + "}\n"
                + "spec: {containers: [{name: c, image: i, ports: [{containerPort: 80}]}]}\n"
                + "status: {phase: Running, podIPs: [{ip: " + V4.get(pod) + "}, {ip: '" + V6.get(pod) + "'}]}\n");
    }

    private JsonObject converge() {
        CliRun r = HarnessMain.run("sandbox", "probe", "--name", name, "--output", "json");
        assertThat(r.exitCode()).as(r.err()).isZero();
        JsonObject probe = GSON.fromJson(r.out(), JsonObject.class);
        assertThat(probe.get("converged").getAsBoolean()).isTrue();
        return probe;
    }

    @Test
    void eachPodsConnectionsGetItsCongestionControlBothWaysAndAChangeReachesNewConnectionsOnly() throws Exception {
        write("a", "bbr");
        write("b", null);
        write("c", "cubic");
        name = "tcp-" + (ProcessHandle.current().pid() % 100000);
        CliRun up = HarnessMain.run("sandbox", "up", "--name", name, "--manifests", dir.toString(), "--backend", "bpf");
        assertThat(up.exitCode()).as(up.err()).isZero();
        converge();
        Sandbox sandbox = Sandbox.named(name);
        Map<String, Sandbox.PodRecord> pods = new LinkedHashMap<>();
        sandbox.pods().forEach(p -> pods.put(p.pod().substring(2), p));
        String fallback = sysctl(pods.get("b"), "net.ipv4.tcp_congestion_control");

        // Every process of a pod is in the pod's cgroup: its server, and what sandbox exec runs.
        Path mount = io.npmagent.harness.process.Cgroups.cgroup2Mount().orElseThrow();
        for (Sandbox.PodRecord p : pods.values()) {
            String relative = "/" + mount.relativize(Path.of(p.cgroup()));
            assertThat(Files.readString(Path.of("/proc", Long.toString(p.serverPid()), "cgroup"))).as(p.pod()).contains("0::" + relative + "\n");
            assertThat(HarnessMain.run("sandbox", "exec", "--name", name, p.pod(), "--", "sh", "-c",
                    "grep -qx '0::" + relative + "' /proc/self/cgroup && exit 7").exitCode()).as(p.pod()).isEqualTo(7);
        }

        Path script = dir.resolve("tcpholder.py");
        try (InputStream in = getClass().getResourceAsStream("tcpholder.py")) {
            Files.copy(in, script, StandardCopyOption.REPLACE_EXISTING);
        }
        Map<String, Holder> holder = new LinkedHashMap<>();
        for (String pod : pods.keySet()) {
            List<String> peers = new ArrayList<>();
            for (String other : pods.keySet()) {
                if (!other.equals(pod)) {
                    peers.add(V4.get(other));
                    peers.add(V6.get(other));
                }
            }
            holder.put(pod, start(pods.get(pod), script, peers));
        }

        Map<String, List<String>> first = round(holder);
        assertThat(first.get("a")).as("a opens and accepts 4 connections each, all bbr").hasSize(8).containsOnly("bbr");
        assertThat(first.get("c")).as("c: all cubic").hasSize(8).containsOnly("cubic");
        assertThat(first.get("b")).as("b, unannotated: its namespace's default").hasSize(8).containsOnly(fallback);
        assertThat(ssCongestion(pods.get("a"))).as("ss -ti in a").hasSize(8).containsOnly("bbr");
        assertThat(ssCongestion(pods.get("c"))).as("ss -ti in c").hasSize(8).containsOnly("cubic");

        // A change at run time: new connections get it; those open keep what they started with.
        write("a", "cubic");
        write("c", "bbr");
        converge();
        Map<String, List<String>> second = round(holder);
        assertThat(second.get("a")).hasSize(8).containsOnly("cubic");
        assertThat(second.get("c")).hasSize(8).containsOnly("bbr");
        assertThat(second.get("b")).hasSize(8).containsOnly(fallback);
        assertThat(ssCongestion(pods.get("a"))).as("ss -ti in a: the first round's and the second's").hasSize(16)
                .filteredOn("bbr"::equals).hasSize(8);

        // Not offered by this kernel: a problem naming pod, annotation and value; the pod's connections keep the default.
        write("a", "nosuchcc");
        converge();
        JsonObject status = GSON.fromJson(Files.readString(sandbox.dir().resolve("status.json")), JsonObject.class);
        assertThat(status.getAsJsonArray("problems").toString()).contains("Pod x/a", CongestionAnnotation.ANNOTATION, "nosuchcc",
                "not available on this node");
        Map<String, List<String>> third = round(holder);
        assertThat(third.get("a")).hasSize(8).containsOnly(fallback);

        CliRun metrics = HarnessMain.run("sandbox", "metrics", "--name", name);
        assertThat(metrics.out()).containsPattern("npm_tcp_congestion_total\\{result=\"set\"\\} [1-9]");
    }

    /** Every pod connects to every other's PORT, both families; per pod, the congestion control of each connection it made or accepted. */
    private static Map<String, List<String>> round(Map<String, Holder> holders) throws IOException {
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (var e : holders.entrySet()) {
            out.put(e.getKey(), new ArrayList<>(e.getValue().ask("connect")));
        }
        int accepted = 2 * (holders.size() - 1);
        for (var e : holders.entrySet()) {
            out.get(e.getKey()).addAll(e.getValue().ask("accepted " + accepted));
        }
        return out;
    }

    /** The congestion control of each established connection on PORT in the pod's namespace, as {@code ss -ti} shows it. */
    private static List<String> ssCongestion(Sandbox.PodRecord pod) throws IOException {
        String out = KernelTestSupport.must(List.of("ip", "netns", "exec", pod.netns(), "ss", "-tinHO", "state", "established",
                "( sport = :" + PORT + " or dport = :" + PORT + " )")).stdout();
        List<String> names = new ArrayList<>();
        for (String line : out.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            String found = null;
            for (String word : line.trim().split("\\s+")) {
                if (word.equals("bbr") || word.equals("cubic") || word.equals("reno")) {
                    found = word;
                }
            }
            assertThat(found).as("a congestion control in: %s", line).isNotNull();
            names.add(found);
        }
        return names;
    }

    private static String sysctl(Sandbox.PodRecord pod, String key) {
        return KernelTestSupport.must(List.of("ip", "netns", "exec", pod.netns(), "sysctl", "-n", key)).stdout().strip();
    }

    private Holder start(Sandbox.PodRecord pod, Path script, List<String> peers) throws IOException {
        List<String> argv = new ArrayList<>(List.of("python3", script.toString(), Integer.toString(PORT)));
        argv.addAll(peers);
        Process p = new ProcessBuilder(pod.command(argv)).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        holders.add(p);
        Holder h = new Holder(pod.pod(), p);
        assertThat(h.in.readLine()).as("%s's holder", pod.pod()).isEqualTo("ready");
        return h;
    }

    /** One pod's tcpholder.py, asked over its stdin and stdout. */
    private static final class Holder {
        final String pod;
        final BufferedReader in;
        final Writer out;

        Holder(String pod, Process p) {
            this.pod = pod;
            this.in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            this.out = new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8);
        }

        /** The congestion control of each connection the command reports. */
        List<String> ask(String command) throws IOException {
            out.write(command + "\n");
            out.flush();
            List<String> names = new ArrayList<>();
            for (String line = in.readLine(); line != null && !line.equals("end"); line = in.readLine()) {
                assertThat(line).as("%s: %s", pod, command).doesNotStartWith("error");
                String[] words = line.split(" ");
                names.add(words[words.length - 1]);
            }
            return names;
        }
    }
}
