package io.npmagent.agent.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.agent.source.manifest.ManifestDirectory;
import io.npmagent.bpf.libbpf.NetnsThread;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.harness.node.PodNetwork;
import io.npmagent.harness.process.Await;
import io.npmagent.harness.process.Daemon;
import io.npmagent.harness.process.Logs;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent process killed with SIGKILL in the middle of a batch, three times: an established
 * connection keeps working throughout, enforcement stays (an allowed pair connects, a denied one does
 * not) while no agent runs, and each restarted agent adopts what it finds and converges to the
 * directory, as {@code npm-agent run} with the iptables-legacy backend.
 *
 * <p>Mid-batch for certain, not by luck of timing: the test holds the agent's xtables lock (a private
 * one, {@code XTABLES_LOCKFILE}), so the batch's {@code iptables-legacy-restore} waits for it after its
 * {@code ipset restore} has run, and the kill comes while it waits. As in a pod, the agent and its
 * children die together.
 */
class AgentRestartKernelTest {
    private static final int ECHO_PORT = 7000;
    private static final int EXTRA_POLICIES = 1000;

    @TempDir
    Path tmp;
    private PodNetwork net;
    private Process agent;
    private Path xtablesLock;
    private ServerSocket echoServer;
    private final List<Socket> sockets = new ArrayList<>();

    @AfterEach
    void teardown() throws IOException {
        if (agent != null) {
            agent.destroyForcibly();
        }
        for (Socket s : sockets) {
            s.close();
        }
        if (echoServer != null) {
            echoServer.close();
        }
        if (net != null) {
            net.close();
        }
    }

    @Test
    void establishedConnectionsSurviveSigkillMidBatchAndTheRestartedAgentConverges() throws Exception {
        KernelTestSupport.require("ip", "python3", "flock", "ipset", "iptables-legacy-restore", "iptables-legacy-save");
        net = PodNetwork.create("a", "b", "c");
        xtablesLock = tmp.resolve("xtables.lock");
        Path manifests = Files.createDirectories(tmp.resolve("manifests"));
        Path state = Files.createDirectories(tmp.resolve("state"));
        Files.writeString(manifests.resolve("cluster.yaml"), cluster());

        agent = startAgent(manifests, state);
        awaitConverged(state, manifests, 1);
        assertThat(net.connects("a", "b", false)).isTrue();
        assertThat(net.connects("c", "b", false)).as("b admits a only").isFalse();

        Socket established = openEchoConnection();
        assertThat(echo(established, "before")).isEqualTo("before");

        for (int round = 0; round < 3; round++) {
            // A big change (a thousand policies more, or gone again): the agent reads it and starts the
            // batch, which waits for the xtables lock the test holds; it dies there.
            boolean adding = round % 2 == 0;
            String setsBefore = ipsetNames();
            String chainsBefore = chains();
            Process lock = holdXtablesLock();
            Files.writeString(manifests.resolve("extra.yaml"), adding ? extraPolicies() : "");
            String target = ManifestDirectory.hash(manifests);
            await(() -> restoreWaiting() != null && target.equals(AgentStatus.read(state).seenHash()),
                    "the agent to read the change, and its batch's iptables-legacy-restore to wait for the lock");
            AgentStatus atKill = AgentStatus.read(state);
            killWithChildren();
            lock.descendants().forEach(ProcessHandle::destroyForcibly); // the sleep that holds the lock
            lock.destroyForcibly();
            lock.waitFor();
            assertThat(atKill.appliedHash()).as("and not applied it").isNotEqualTo(target);
            assertThat(chains()).as("no chain changed: the restore never ran").isEqualTo(chainsBefore);
            if (adding) {
                assertThat(ipsetNames()).as("the batch's new sets were in the kernel: half of it landed").isNotEqualTo(setsBefore);
            }

            assertThat(echo(established, "while dead " + round)).as("the established connection, no agent running")
                    .isEqualTo("while dead " + round);
            assertThat(net.connects("a", "b", false)).as("allowed while no agent runs").isTrue();
            assertThat(net.connects("c", "b", false)).as("denied while no agent runs").isFalse();

            agent = startAgent(manifests, state);
            awaitConverged(state, manifests, 1 + (round % 2 == 0 ? EXTRA_POLICIES : 0));
            assertThat(echo(established, "after " + round)).isEqualTo("after " + round);
            assertThat(net.connects("a", "b", false)).as("allowed after the restart").isTrue();
            assertThat(net.connects("a", "b", true)).isTrue();
            assertThat(net.connects("c", "b", false)).as("denied after the restart").isFalse();
            assertThat(net.connects("b", "c", false)).as("c is not isolated").isTrue();
        }
    }

    /** Holds the agent's xtables lock (flock, as iptables takes it) until the returned process is killed. */
    private Process holdXtablesLock() throws Exception {
        Process p = new ProcessBuilder("flock", xtablesLock.toString(), "sleep", "600").redirectErrorStream(true).start();
        Instant deadline = Instant.now().plusSeconds(10);
        while (new ProcessBuilder("flock", "-n", xtablesLock.toString(), "true").start().waitFor() == 0) {
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("could not take the xtables lock " + xtablesLock);
            }
            Thread.sleep(10);
        }
        return p;
    }

    /** The agent's iptables-legacy-restore, waiting for the lock; null if there is none. */
    private ProcessHandle restoreWaiting() {
        return agent.descendants().filter(p -> cmdline(p).contains("iptables-legacy-restore")).findFirst().orElse(null);
    }

    private static String cmdline(ProcessHandle p) {
        try {
            return Files.readString(Path.of("/proc", Long.toString(p.pid()), "cmdline")).replace('\0', ' ');
        } catch (IOException gone) {
            return "";
        }
    }

    /** SIGKILL to the agent and every process it started, as when a pod's container is killed. */
    private void killWithChildren() throws InterruptedException {
        List<ProcessHandle> children = agent.descendants().toList();
        agent.toHandle().destroyForcibly();
        children.forEach(ProcessHandle::destroyForcibly);
        agent.waitFor();
        for (ProcessHandle c : children) {
            c.onExit().join();
        }
    }

    private String ipsetNames() {
        return net.node().must("ipset", "list", "-n").stdout();
    }

    private String chains() {
        return net.node().must("iptables-legacy-save", "-t", "filter").stdout().lines()
                .filter(l -> !l.startsWith("#") && !l.startsWith(":")).collect(Collectors.joining("\n"));
    }

    private String cluster() {
        StringBuilder y = new StringBuilder("apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n");
        for (String p : List.of("a", "b", "c")) {
            y.append("---\napiVersion: v1\nkind: Pod\nmetadata: {name: ").append(p).append(", namespace: x, labels: {app: ").append(p)
                    .append("}}\nspec: {containers: [{name: c, image: i}]}\nstatus: {podIP: ").append(net.address(p, false))
                    .append(", podIPs: [{ip: ").append(net.address(p, false)).append("}, {ip: \"").append(net.address(p, true))
                    .append("\"}]}\n");
        }
        y.append("---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: b-in, namespace: x}\n")
                .append("spec: {podSelector: {matchLabels: {app: b}}, ingress: [{from: [{podSelector: {matchLabels: {app: a}}}], ")
                .append("ports: [{port: ").append(PodNetwork.PORT).append("}, {port: ").append(ECHO_PORT).append("}]}]}\n");
        return y.toString();
    }

    /** Policies that all select b and admit pods no one runs: more work, the same verdicts. */
    private static String extraPolicies() {
        StringBuilder y = new StringBuilder();
        for (int i = 0; i < EXTRA_POLICIES; i++) {
            y.append("---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: extra-").append(i)
                    .append(", namespace: x}\nspec: {podSelector: {matchLabels: {app: b}}, ingress: [{from: [{podSelector: ")
                    .append("{matchLabels: {app: z").append(i).append("}}}], ports: [{port: ").append(1000 + i).append("}]}]}\n");
        }
        return y.toString();
    }

    private Process startAgent(Path manifests, Path state) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        return Daemon.of("npm-agent run", tmp.resolve("agent.log"), List.of(java, "-cp", System.getProperty("java.class.path"), "io.npmagent.agent.cli.Main", "run",
                "--manifests", manifests.toString(), "--backend", "iptables-legacy", "--netns", net.node().name(),
                "--state-dir", state.toString(), "--poll-ms", "50"))
                .env("XTABLES_LOCKFILE", xtablesLock.toString()).start().process();
    }

    private void awaitConverged(Path state, Path manifests, int policies) throws Exception {
        String hash = ManifestDirectory.hash(manifests);
        await(() -> {
            AgentStatus s = AgentStatus.read(state);
            return s != null && s.appliedHash().equals(hash) && s.policies() == policies && s.failures().isEmpty();
        }, "the agent to converge to " + hash + " with " + policies + " policies");
    }

    private void await(Check check, String what) {
        Await.until(Duration.ofSeconds(60), "waiting for " + what, () -> {
            if (!agent.isAlive()) {
                throw new Await.Abort("the agent exited while waiting for " + what + "\n" + Logs.tail(tmp.resolve("agent.log"), 60));
            }
            return ok(check);
        }, () -> Logs.tail(tmp.resolve("agent.log"), 60));
    }

    private static boolean ok(Check check) {
        try {
            return check.ok();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private interface Check {
        boolean ok() throws IOException;
    }

    /** A TCP connection from a to an echo server in b, opened in their namespaces, used from here. */
    private Socket openEchoConnection() throws Exception {
        InetAddress b = InetAddress.getByName(net.address("b", false).toString());
        try (NetnsThread inB = NetnsThread.enter(net.pod("b").name())) {
            echoServer = inB.call(() -> new ServerSocket(ECHO_PORT, 10, InetAddress.getByName("0.0.0.0")));
        }
        Thread server = new Thread(() -> {
            try (Socket s = echoServer.accept()) {
                BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
                PrintWriter out = new PrintWriter(s.getOutputStream(), true, StandardCharsets.UTF_8);
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    out.println(line);
                }
            } catch (IOException closed) {
                // the test is over
            }
        }, "echo-in-b");
        server.setDaemon(true);
        server.start();
        try (NetnsThread inA = NetnsThread.enter(net.pod("a").name())) {
            Socket s = inA.call(() -> {
                Socket c = new Socket();
                c.connect(new InetSocketAddress(b, ECHO_PORT), 2000);
                c.setSoTimeout(2000);
                return c;
            });
            sockets.add(s);
            return s;
        }
    }

    private static String echo(Socket s, String line) throws IOException {
        PrintWriter out = new PrintWriter(s.getOutputStream(), true, StandardCharsets.UTF_8);
        out.println(line);
        return new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8)).readLine();
    }
}
