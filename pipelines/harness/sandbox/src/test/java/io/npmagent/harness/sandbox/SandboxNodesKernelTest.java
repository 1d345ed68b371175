package io.npmagent.harness.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import io.npmagent.agent.cli.CliRun;
import io.npmagent.bpf.libbpf.Capabilities;
import io.npmagent.harness.cli.HarnessMain;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * A sandbox of two nodes, an agent on each, through its contract: pods land where {@code spec.nodeName}
 * says or round-robin, a pod on one node reaches a pod on the other (directly and through a Service whose
 * backend is on the other node, IPv4 and IPv6), the server's node judges ingress by the client's own
 * address (a podSelector admits a pod on another node and refuses a stranger on either), and
 * {@code down} leaves nothing of either node or of the underlay between them.
 */
class SandboxNodesKernelTest extends SandboxTestBase {
    @Test
    void podsAcrossTwoNodesAreJudgedByTheirOwnAddressesDirectlyAndThroughAService() throws IOException {
        String s = name("kn");
        String second = "npmsb-" + s + "-1";
        write("a.yaml", pod("client", "client", "", "{containerPort: 80}"));
        write("b.yaml", pod("near", "stranger", "", "{containerPort: 80}"));
        write("c.yaml", pod("far", "stranger", "", "{containerPort: 80}"));
        write("d.yaml", pod("server", "server", "", "{name: http, containerPort: 80}").replace("spec: {", "spec: {nodeName: " + second + ", "));
        write("service.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: server, namespace: x}\n"
                + "spec: {selector: {app: server}, ipFamilyPolicy: PreferDualStack, ports: [{port: 8080, targetPort: http, protocol: TCP}]}\n");
        write("policy.yaml", "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: server-in, namespace: x}\n"
                + "spec: {podSelector: {matchLabels: {app: server}}, ingress: [{from: [{podSelector: {matchLabels: {app: client}}}], ports: [{port: 80}]}]}\n");
        CliRun up = HarnessMain.run("sandbox", "up", "--name", s, "--manifests", dir.toString(), "--backend", "bpf", "--nodes", "2");
        assertThat(up.exitCode()).as(up.err()).isZero();
        assertThat(up.out()).contains("2 nodes", "4 pods");

        CliRun nodes = HarnessMain.run("sandbox", "nodes", "--name", s);
        assertThat(nodes.out().lines().map(l -> l.split("\t")[0]).toList()).containsExactly("npmsb-" + s, second);
        Map<String, String> placed = Sandbox.named(s).pods().stream().collect(Collectors.toMap(Sandbox.PodRecord::pod, Sandbox.PodRecord::node));
        assertThat(placed).as("nodeName places, the rest round-robin in the order applied").containsExactlyInAnyOrderEntriesOf(Map.of(
                "x/client", "npmsb-" + s, "x/near", second, "x/far", "npmsb-" + s, "x/server", second));

        JsonObject probe = probe(s);
        for (String family : List.of("IPv4", "IPv6")) {
            assertThat(allowed(probe, "x/client", "x/server", 80, "TCP", family)).as("admitted from the other node (%s)", family).isTrue();
            assertThat(allowed(probe, "x/far", "x/server", 80, "TCP", family)).as("a stranger on the other node (%s)", family).isFalse();
            assertThat(allowed(probe, "x/near", "x/server", 80, "TCP", family)).as("a stranger on the same node (%s)", family).isFalse();
            assertThat(allowed(probe, "x/server", "x/client", 80, "TCP", family)).as("no policy on the client (%s)", family).isTrue();
            assertThat(allowed(probe, "x/near", "x/far", 80, "TCP", family)).as("no policy between strangers (%s)", family).isTrue();
            assertThat(throughService(probe, "x/client", family)).as("DNAT on the client's node, judged on the server's (%s)", family).isTrue();
            assertThat(throughService(probe, "x/far", family)).isFalse();
            assertThat(throughService(probe, "x/near", family)).isFalse();
        }
        assertThat(probe.getAsJsonArray("results").asList()).as("every probe a verdict")
                .allSatisfy(r -> assertThat(r.getAsJsonObject().has("error")).as("%s", r).isFalse());

        CliRun metrics = HarnessMain.run("sandbox", "metrics", "--name", s, "--node", second, "--grep", "npm_num_policies");
        assertThat(metrics.exitCode()).as(metrics.err()).isZero();
        assertThat(metrics.out()).as("the second node's agent's own metrics").contains("npm_num_policies");

        Sandbox sandbox = Sandbox.named(s);
        SandboxNode node1 = sandbox.node(1);
        CliRun down = HarnessMain.run("sandbox", "down", "--name", s);
        assertThat(down.exitCode()).as(down.err()).isZero();
        assertThat(sandbox.namespaces()).as("the nodes', the pods' and the underlay's namespaces").isEmpty();
        assertThat(Files.exists(sandbox.node(0).cgroup())).isFalse();
        assertThat(Files.exists(node1.cgroup())).isFalse();
        assertThat(Capabilities.bpffsAt(node1.bpffs())).isFalse();
        assertThat(Files.exists(sandbox.dir())).isFalse();
    }

    private static boolean throughService(JsonObject probe, String from, String family) {
        return throughService(probe, from, "x/server", 8080, family).get("allowed").getAsBoolean();
    }
}
