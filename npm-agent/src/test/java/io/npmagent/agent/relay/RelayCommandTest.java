package io.npmagent.agent.relay;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1PodList;
import io.npmagent.agent.cli.Main;
import io.npmagent.agent.cluster.TestCluster;
import io.npmagent.agent.source.k8s.PodWatchList;
import io.npmagent.harness.controlplane.ControlPlane;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code npm-agent relay} as a cluster runs it: TLS with a certificate from the cluster's CA, its own
 * credentials to read the API server, and the agent reading pods through it with its ServiceAccount's
 * token, as it reads them from the API server. A certificate it cannot read is a usage error that names it.
 */
class RelayCommandTest {
    @TempDir
    Path tmp;

    @Test
    void theAgentReadsPodsThroughTheRelayOverTls() throws Exception {
        try (TestCluster cluster = TestCluster.start(tmp.resolve("cluster"))) {
            cluster.create(new NamespaceBuilder().withNewMetadata().withName("shop").endMetadata().build());
            cluster.create(new PodBuilder().withNewMetadata().withName("web").withNamespace("shop").addToLabels("app", "web").endMetadata()
                    .withNewSpec().withNodeName("node-1").addNewContainer().withName("c").withImage("nginx").endContainer().endSpec()
                    .withNewStatus().withPhase("Running").withPodIP("10.0.0.1").addNewPodIP("10.0.0.1").endStatus().build());
            List<Path> tls = cluster.controlPlane().servingCertificate("npm-relay", List.of("127.0.0.1"));
            int port = ControlPlane.freePort();
            StringWriter out = new StringWriter();
            CommandLine relay = Main.commandLine();
            relay.setOut(new PrintWriter(out, true));
            Thread running = new Thread(() -> relay.execute("relay", "--kubeconfig", cluster.controlPlane().adminKubeconfig().toString(),
                    "--listen", "127.0.0.1:" + port, "--tls-cert", tls.get(0).toString(), "--tls-key", tls.get(1).toString()), "relay-command");
            running.setDaemon(true);
            running.start();
            try {
                PodWatchList viaRelay = new PodWatchList(cluster.agentClient().setBasePath("https://127.0.0.1:" + port), p -> p);
                V1PodList pods = null;
                for (long deadline = System.nanoTime() + 30_000_000_000L; pods == null; ) {
                    try {
                        pods = viaRelay.list("0");
                    } catch (ApiException notYet) { // not listening yet (0), or not yet read the API server (429)
                        assertThat(notYet.getCode()).as(notYet.getMessage()).isIn(0, 429);
                        assertThat(System.nanoTime()).as("the relay serves within 30 s").isLessThan(deadline);
                        Thread.sleep(200);
                    }
                }
                assertThat(pods.getItems()).extracting(p -> p.getMetadata().getNamespace() + "/" + p.getMetadata().getName()).containsExactly("shop/web");
                assertThat(out.toString()).contains("serving pods at https://127.0.0.1:" + port, "system:serviceaccount:kube-system:npm-agent");
            } finally {
                running.interrupt();
            }
        }
    }

    @Test
    void aCertificateItCannotReadIsAUsageErrorThatNamesIt() {
        StringWriter err = new StringWriter();
        CommandLine relay = Main.commandLine();
        relay.setErr(new PrintWriter(err, true));
        int exit = relay.execute("relay", "--tls-cert", tmp.resolve("none.crt").toString(), "--tls-key", tmp.resolve("none.key").toString());
        assertThat(exit).isEqualTo(2);
        assertThat(err.toString()).contains("npm-agent relay: --tls-cert " + tmp.resolve("none.crt"));
    }
}
