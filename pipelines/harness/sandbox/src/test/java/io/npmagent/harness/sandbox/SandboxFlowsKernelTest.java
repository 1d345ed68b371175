package io.npmagent.harness.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import io.npmagent.agent.cli.CliRun;
import io.npmagent.harness.cli.HarnessMain;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * #39's bar in a sandbox, on every backend: the agent on its production path (informers, the backend's
 * kernel reports, its flow log, {@code /debug/flows}), read by {@code sandbox flows}. A connection a
 * NetworkPolicy default deny drops is one flow within a second, naming both pods, the port, the direction
 * and every policy isolating the pod; one an Admin ClusterNetworkPolicy Deny drops names its tier, policy
 * and rule; 1,000 retries of one flow (new source ports) are one flow counting them.
 */
class SandboxFlowsKernelTest extends SandboxTestBase {
    private static final String POLICIES = String.join("\n",
            "apiVersion: networking.k8s.io/v1",
            "kind: NetworkPolicy",
            "metadata: {name: deny-b, namespace: x}",
            "spec: {podSelector: {matchLabels: {app: b}}, policyTypes: [Ingress]}",
            "---",
            "apiVersion: networking.k8s.io/v1",
            "kind: NetworkPolicy",
            "metadata: {name: b-admits-c, namespace: x}",
            "spec:",
            "  podSelector: {matchLabels: {app: b}}",
            "  ingress: [{from: [{podSelector: {matchLabels: {app: c}}}], ports: [{port: 80}]}]",
            "---",
            "apiVersion: policy.networking.k8s.io/v1beta1",
            "kind: ClusterNetworkPolicy",
            "metadata: {name: c-never-to-b}",
            "spec:",
            "  tier: Admin",
            "  priority: 10",
            "  subject: {pods: {namespaceSelector: {}, podSelector: {matchLabels: {app: b}}}}",
            "  ingress: [{name: no-c, action: Deny, from: [{pods: {namespaceSelector: {}, podSelector: {matchLabels: {app: c}}}}]}]",
            "");

    /**
     * Every backend; in CI (its short form, for time) eBPF and iptables-legacy: the two ways the kernel reports
     * (ring buffer; NFLOG and sets, which nft and iptables-nft share with it), each backend's own kernel part being
     * told the same story in its module ({@code PacketScenarios#flowVerdictsNameWhatDecided}).
     */
    static List<String> backends() {
        return "true".equals(System.getenv("CI")) ? List.of("bpf", "iptables-legacy") : List.of("bpf", "nft", "iptables-nft", "iptables-legacy");
    }

    @ParameterizedTest
    @MethodSource("backends")
    void deniedConnectionsAreFlowsNamingWhatDeniedThem(String backend) throws IOException {
        write("a.yaml", pod("a", "a", "{ip: 10.71.0.1}", "{containerPort: 80}"));
        write("b.yaml", pod("b", "b", "{ip: 10.71.0.2}", "{containerPort: 80}"));
        write("c.yaml", pod("c", "c", "{ip: 10.71.0.3}", "{containerPort: 80}"));
        write("policies.yaml", POLICIES);
        String s = name("fl");
        CliRun up = HarnessMain.run("sandbox", "up", "--name", s, "--manifests", dir.toString(), "--backend", backend);
        assertThat(up.exitCode()).as(up.err()).isZero();
        JsonObject probe = probe(s);
        assertThat(allowed(probe, "x/a", "x/b", 80, "TCP", "IPv4")).as("isolated by deny-b and b-admits-c").isFalse();
        assertThat(allowed(probe, "x/c", "x/b", 80, "TCP", "IPv4")).as("b admits c, the Admin tier denies it first").isFalse();

        attempts(s, 81, 1);
        JsonObject isolated = await(s, f -> port(f) == 81, 1, 1_000);
        assertThat(peer(isolated, "source")).isEqualTo("x/a");
        assertThat(peer(isolated, "destination")).isEqualTo("x/b");
        assertThat(isolated.get("direction").getAsString()).isEqualTo("ingress");
        assertThat(isolated.get("verdict").getAsString()).isEqualTo("denied");
        assertThat(isolated.get("backend").getAsString()).isEqualTo(backend);
        JsonObject attribution = isolated.getAsJsonObject("attribution");
        assertThat(attribution.get("kind").getAsString()).isEqualTo("NetworkPolicy");
        List<String> policies = new ArrayList<>();
        attribution.getAsJsonArray("policies").forEach(p -> policies.add(p.getAsJsonObject().get("namespace").getAsString() + "/"
                + p.getAsJsonObject().get("name").getAsString()));
        assertThat(policies).as("every policy isolating b").containsExactly("x/b-admits-c", "x/deny-b");

        JsonObject byTier = await(s, f -> port(f) == 80 && "x/c".equals(peer(f, "source")), 1, 10_000);
        assertThat(byTier.getAsJsonObject("attribution").get("text").getAsString()).isEqualTo("Admin cnp/c-never-to-b ingress[0] \"no-c\" Deny");
        assertThat(byTier.getAsJsonObject("attribution").get("tier").getAsString()).isEqualTo("Admin");

        attempts(s, 82, 1000);
        JsonObject retried = await(s, f -> port(f) == 82, 1000, 20_000);
        assertThat(flows(s).stream().filter(f -> port(f) == 82)).as("1,000 retries from new source ports: one flow").hasSize(1);
        assertThat(retried.get("packets").getAsLong()).isGreaterThanOrEqualTo(1000);
    }

    /** {@code count} TCP connects from x/a to x/b's {@code port}, each from a new source port, each given up after its SYN. */
    private static void attempts(String sandbox, int port, int count) {
        String script = "import socket\n"
                + "for i in range(" + count + "):\n"
                + "    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
                + "    s.setblocking(False)\n"
                + "    try:\n"
                + "        s.connect(('10.71.0.2', " + port + "))\n"
                + "    except BlockingIOError:\n"
                + "        pass\n"
                + "    s.close()\n";
        CliRun r = HarnessMain.run("sandbox", "exec", "--name", sandbox, "x/a", "--", "python3", "-c", script);
        assertThat(r.exitCode()).as(r.err()).isZero();
    }

    /** The flow the predicate picks once it has {@code packets}, asked of the sandbox's agent until {@code millis} have passed. */
    private static JsonObject await(String sandbox, Predicate<JsonObject> which, long packets, long millis) {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        List<JsonObject> seen = List.of();
        while (System.nanoTime() < deadline) {
            seen = flows(sandbox);
            for (JsonObject f : seen) {
                if (which.test(f) && f.get("packets").getAsLong() >= packets) {
                    return f;
                }
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
        throw new AssertionError("no such flow with " + packets + " packets within " + millis + " ms; the agent has " + seen);
    }

    private static List<JsonObject> flows(String sandbox) {
        CliRun r = HarnessMain.run("sandbox", "flows", "--name", sandbox, "--output", "json");
        assertThat(r.exitCode()).as(r.err()).isZero();
        List<JsonObject> out = new ArrayList<>();
        r.out().lines().filter(l -> !l.isBlank()).forEach(l -> out.add(GSON.fromJson(l, JsonObject.class)));
        return out;
    }

    private static int port(JsonObject flow) {
        return flow.get("port").getAsInt();
    }

    private static String peer(JsonObject flow, String end) {
        JsonObject p = flow.getAsJsonObject(end);
        return p.has("pod") && !p.get("pod").isJsonNull() ? p.get("pod").getAsString() : null;
    }
}
