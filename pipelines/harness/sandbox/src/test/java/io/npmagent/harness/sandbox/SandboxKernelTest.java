package io.npmagent.harness.sandbox;

import io.npmagent.harness.cli.HarnessMain;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.npmagent.agent.cli.CliRun;
import io.npmagent.agent.source.manifest.ManifestDirectory;
import io.npmagent.dataplane.eval.Endpoint;
import io.npmagent.dataplane.eval.ReferenceEvaluator;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.Protocol;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The sandbox through its contract (the CLI and the probe's JSON), as other tools drive it: a node of a
 * real cluster (kubectl lists its pods Running with their addresses, kube-proxy's rules are in the node
 * namespace), pods come and go with the directory, real packets agree with the reference evaluator in
 * both families, two sandboxes live side by side, and {@code down} cleans up after a crashed daemon
 * (Services through kube-proxy: {@link SandboxServiceKernelTest}).
 */
class SandboxKernelTest extends SandboxTestBase {
    @Test
    void probesAgreeWithTheEvaluatorAsPodsAndPoliciesComeAndGo() throws IOException {
        write("a.yaml", pod("a", "a", "{ip: 10.70.0.1}, {ip: 'fd70::1'}", "{containerPort: 80}, {containerPort: 53, protocol: UDP}"));
        write("b.yaml", pod("b", "b", "", "{containerPort: 80}, {name: sctp, containerPort: 9, protocol: SCTP}"));
        String s = name("kt");
        CliRun up = HarnessMain.run("sandbox", "up", "--name", s, "--manifests", dir.toString(), "--backend", "nft");
        assertThat(up.exitCode()).as(up.err()).isZero();
        assertThat(up.out()).contains("2 pods");
        // A node of a real cluster: kubectl sees the pods Running with their addresses, and kube-proxy's
        // rules are in the node's namespace.
        CliRun kubeconfig = HarnessMain.run("sandbox", "kubeconfig", "--name", s);
        assertThat(kubeconfig.exitCode()).as(kubeconfig.err()).isZero();
        Process kubectl = new ProcessBuilder(io.npmagent.harness.controlplane.KubeBinaries.binary("kubectl").toString(), "--kubeconfig",
                kubeconfig.out().strip(), "get", "pods", "-A", "-o", "custom-columns=NAME:.metadata.name,PHASE:.status.phase,IP:.status.podIP",
                "--no-headers").redirectErrorStream(true).start();
        String pods = new String(kubectl.getInputStream().readAllBytes());
        assertThat(pods).containsPattern("a\\s+Running\\s+10\\.70\\.0\\.1").containsPattern("b\\s+Running\\s+10\\.250\\.");
        Process rules = new ProcessBuilder("ip", "netns", "exec", Sandbox.named(s).node(0).netns(), "iptables", "-t", "nat", "-S", "KUBE-SERVICES")
                .redirectErrorStream(true).start();
        assertThat(new String(rules.getInputStream().readAllBytes())).as("kube-proxy's rules in the node namespace")
                .contains("default/kubernetes:https cluster IP");

        JsonObject open = probe(s);
        assertThat(open.get("converged").getAsBoolean()).isTrue();
        assertAgreesWithEvaluator(open, 2 + 2 + 1, 0);

        write("policy.yaml", "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: only-udp, namespace: x}\n"
                + "spec: {podSelector: {matchLabels: {app: a}}, ingress: [{ports: [{protocol: UDP}]}]}\n");
        JsonObject isolated = probe(s);
        assertAgreesWithEvaluator(isolated, 4, 2);
        assertThat(allowed(isolated, "x/b", "x/a", 80, "TCP", "IPv4")).isFalse();
        assertThat(allowed(isolated, "x/b", "x/a", 53, "UDP", "IPv6")).isTrue();

        write("c.yaml", pod("c", "c", "", "{containerPort: 80}"));
        JsonObject three = probe(s);
        assertThat(pods(three)).containsExactlyInAnyOrder("x/a", "x/b", "x/c");
        assertAgreesWithEvaluator(three, 0, 0);

        Files.delete(dir.resolve("c.yaml"));
        assertThat(pods(probe(s))).containsExactlyInAnyOrder("x/a", "x/b");
    }

    @Test
    void twoSandboxesLiveSideBySideAndDownCleansUpAfterACrash() throws IOException, InterruptedException {
        write("a.yaml", pod("a", "a", "{ip: 10.70.0.1}", "{containerPort: 80}"));
        write("b.yaml", pod("b", "b", "{ip: 10.70.0.2}", "{containerPort: 80}"));
        Path other = Files.createDirectory(dir.resolve("other"));
        Files.copy(dir.resolve("a.yaml"), other.resolve("a.yaml"));
        Files.copy(dir.resolve("b.yaml"), other.resolve("b.yaml"));
        Files.writeString(other.resolve("deny.yaml"), "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n"
                + "metadata: {name: deny, namespace: x}\nspec: {podSelector: {}}\n");
        String one = name("ka");
        String two = name("kb");
        assertThat(HarnessMain.run("sandbox", "up", "--name", one, "--manifests", dir.toString(), "--backend", "iptables-nft").exitCode()).isZero();
        assertThat(HarnessMain.run("sandbox", "up", "--name", two, "--manifests", other.toString(), "--backend", "nft", "--kube-proxy-mode", "nftables")
                .exitCode()).isZero();
        Process table = new ProcessBuilder("ip", "netns", "exec", Sandbox.named(two).node(0).netns(), "nft", "list", "table", "ip", "kube-proxy")
                .redirectErrorStream(true).start();
        assertThat(new String(table.getInputStream().readAllBytes())).as("kube-proxy in nftables mode, in the node namespace")
                .contains("default/kubernetes/tcp/https");

        assertThat(allowed(probe(one), "x/a", "x/b", 80, "TCP", "IPv4")).as("same addresses, own node").isTrue();
        assertThat(allowed(probe(two), "x/a", "x/b", 80, "TCP", "IPv4")).isFalse();

        Sandbox.Spec spec = Sandbox.named(two).spec();
        ProcessHandle.of(spec.daemonPid()).ifPresent(ProcessHandle::destroyForcibly);
        Thread.sleep(300);
        CliRun down = HarnessMain.run("sandbox", "down", "--name", two);
        assertThat(down.exitCode()).isZero();
        assertThat(Sandbox.named(two).namespaces()).isEmpty();
        assertThat(Files.exists(Sandbox.named(two).dir())).isFalse();
        assertThat(ProcessHandle.allProcesses().filter(h -> SandboxLifecycle.commandLine(h.pid()).orElse("").contains("/" + two + "/")))
                .as("no server of the crashed sandbox left").isEmpty();
        assertThat(allowed(probe(one), "x/a", "x/b", 80, "TCP", "IPv4")).as("the other sandbox untouched").isTrue();

        long daemon = Sandbox.named(one).spec().daemonPid();
        assertThat(HarnessMain.run("sandbox", "down", "--name", one).exitCode()).isZero();
        assertThat(ProcessHandle.of(daemon).map(ProcessHandle::isAlive).orElse(false))
                .as("down stops a live daemon, however long its command line").isFalse();
    }

    @Test
    void probeNamesWhatIsMissingAndExecReturnsTheCommandsExitCode() throws IOException {
        CliRun none = HarnessMain.run("sandbox", "probe", "--name", "no-such-sandbox");
        assertThat(none.exitCode()).isNotZero();
        assertThat(none.err()).contains("there is no sandbox named no-such-sandbox");

        write("a.yaml", pod("a", "a", "{ip: 10.70.0.1}", "{containerPort: 80}"));
        String s = name("ke");
        assertThat(HarnessMain.run("sandbox", "up", "--name", s, "--manifests", dir.toString(), "--backend", "nft").exitCode()).isZero();
        assertThat(HarnessMain.run("sandbox", "exec", "--name", s, "x/a", "--", "sh", "-c", "ip -br addr show eth0 | grep -q 10.70.0.1 && exit 7").exitCode())
                .isEqualTo(7);
        assertThat(HarnessMain.run("sandbox", "exec", "--name", s, "x/nope", "--", "true").err()).contains("has no pod x/nope");
    }

    /** Every probe result agrees with the reference evaluator on the cluster the sandbox built. */
    private void assertAgreesWithEvaluator(JsonObject probe, int minimumAllowed, int minimumDenied) throws IOException {
        ClusterState cluster = new AddressAssigner().assign(new ManifestDirectory(dir).scan().state());
        ReferenceEvaluator evaluator = new ReferenceEvaluator(cluster);
        int allowed = 0;
        int denied = 0;
        for (JsonElement e : probe.getAsJsonArray("results")) {
            JsonObject r = e.getAsJsonObject();
            assertThat(r.has("error")).as("%s", r).isFalse();
            IpAddress from = address(cluster, r.get("from").getAsString(), r.get("family").getAsString());
            IpAddress to = address(cluster, r.get("to").getAsString(), r.get("family").getAsString());
            boolean expected = evaluator.allowed(Endpoint.external(from), Endpoint.external(to), r.get("port").getAsInt(),
                    Protocol.valueOf(r.get("protocol").getAsString())).allowed();
            assertThat(r.get("allowed").getAsBoolean()).as("%s", r).isEqualTo(expected);
            allowed += expected ? 1 : 0;
            denied += expected ? 0 : 1;
        }
        assertThat(allowed).isGreaterThanOrEqualTo(minimumAllowed);
        assertThat(denied).isGreaterThanOrEqualTo(minimumDenied);
    }

    private static IpAddress address(ClusterState cluster, String pod, String family) {
        return cluster.pod(PodKey.parse(pod)).orElseThrow().ips().stream()
                .filter(ip -> ip.v6() == family.equals("IPv6")).findFirst().orElseThrow();
    }

    private static List<String> pods(JsonObject probe) {
        Map<String, Boolean> seen = new HashMap<>();
        for (JsonElement e : probe.getAsJsonArray("results")) {
            seen.put(e.getAsJsonObject().get("from").getAsString(), true);
            seen.put(e.getAsJsonObject().get("to").getAsString(), true);
        }
        return new ArrayList<>(seen.keySet());
    }
}
