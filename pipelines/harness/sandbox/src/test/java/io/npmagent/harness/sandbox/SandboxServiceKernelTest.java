package io.npmagent.harness.sandbox;

import io.npmagent.harness.cli.HarnessMain;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import io.npmagent.agent.cli.CliRun;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Traffic through a Service in the sandbox, with the real kube-proxy in either mode: judged on the
 * backend kube-proxy chose. Apart from {@link SandboxKernelTest} so the two run in parallel forks.
 */
class SandboxServiceKernelTest extends SandboxTestBase {
    /**
     * The reproduction with the real kube-proxy (both modes) on the eBPF backend: a client whose
     * egress policy admits the server pods reaches them through their Service's ClusterIP (port 8080 to
     * the named targetPort http, which kube-proxy resolves to the server's port 80; both families); once the policy admits only another pod, it does not, while a pod no
     * policy selects still does. The probe waits for kube-proxy's programming and reports each Service port.
     */
    @ParameterizedTest
    @ValueSource(strings = {"iptables", "nftables"})
    void egressThroughAServiceIsJudgedOnTheBackendKubeProxyChose(String kubeProxyMode) throws IOException {
        write("client.yaml", pod("client", "client", "", "{containerPort: 80}"));
        write("other.yaml", pod("other", "other", "", "{containerPort: 80}"));
        write("server.yaml", pod("server", "server", "", "{name: http, containerPort: 80}"));
        write("service.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: server, namespace: x}\n"
                + "spec: {selector: {app: server}, ipFamilyPolicy: PreferDualStack, ports: [{port: 8080, targetPort: http, protocol: TCP}]}\n");
        write("policy.yaml", egress("server"));
        String s = name("kv");
        CliRun up = HarnessMain.run("sandbox", "up", "--name", s, "--manifests", dir.toString(), "--backend", "bpf", "--kube-proxy-mode", kubeProxyMode);
        assertThat(up.exitCode()).as(up.err()).isZero();
        JsonObject admitted = probe(s);
        for (String family : List.of("IPv4", "IPv6")) {
            assertThat(throughService(admitted, "x/client", family)).as("the policy admits the backend (%s)", family).isTrue();
            assertThat(throughService(admitted, "x/other", family)).isTrue();
        }
        write("policy.yaml", egress("other"));
        JsonObject refused = probe(s);
        for (String family : List.of("IPv4", "IPv6")) {
            assertThat(throughService(refused, "x/client", family)).as("the policy admits only x/other now (%s)", family).isFalse();
            assertThat(throughService(refused, "x/other", family)).isTrue();
            assertThat(allowed(refused, "x/client", "x/other", 80, "TCP", family)).isTrue();
        }
    }

    private static String egress(String to) {
        return "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: client-out, namespace: x}\n"
                + "spec: {podSelector: {matchLabels: {app: client}}, policyTypes: [Egress], egress: [{to: [{podSelector: {matchLabels: {app: "
                + to + "}}}], ports: [{port: 80}]}]}\n";
    }

    /** The probe from {@code from} through Service x/server's port 8080 in {@code family}, whose one backend is x/server. */
    private static boolean throughService(JsonObject probe, String from, String family) {
        JsonObject r = throughService(probe, from, "x/server", 8080, family);
        assertThat(r.get("to").getAsString()).as("the Service's one backend").isEqualTo("x/server");
        return r.get("allowed").getAsBoolean();
    }

}
