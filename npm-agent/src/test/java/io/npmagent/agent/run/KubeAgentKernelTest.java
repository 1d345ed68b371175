package io.npmagent.agent.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeerBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.npmagent.agent.cluster.TestCluster;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.harness.node.PodNetwork;
import io.npmagent.harness.process.Await;
import io.npmagent.harness.process.Daemon;
import io.npmagent.harness.process.Logs;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code npm-agent run} as a DaemonSet runs it: the API server as its source (a real kube-apiserver,
 * reached with the agent's ServiceAccount token in a kubeconfig), a configuration file mounted the way kubelet mounts a ConfigMap, the
 * eBPF backend, pods in network namespaces. Real packets decide every assertion: the policy is enforced
 * once /readyz says so, a policy edit through the API lands, a ConfigMap change flips
 * NetPolInBackground with no restart, and across a SIGKILL and restart enforcement never lapses: the
 * allowed pair keeps connecting and the denied one never gets through, while the restarted agent picks
 * up a change made while it was dead.
 */
class KubeAgentKernelTest {
    private static final String NODE = "node-1";

    @TempDir
    Path tmp;
    private PodNetwork net;
    private Path bpffs;
    private Process agent;
    private TestCluster cluster;
    private KubernetesClient kube;
    private int port;
    private int debugPort;
    private final HttpClient http = HttpClient.newHttpClient();

    @AfterEach
    void teardown() throws IOException {
        if (agent != null) {
            agent.destroyForcibly();
        }
        if (cluster != null) {
            cluster.close();
        }
        if (net != null) {
            net.close();
        }
        if (bpffs != null) {
            KernelTestSupport.must(List.of("umount", bpffs.toString()));
        }
    }

    @Test
    void enforcesWhatTheApiServerSaysFollowsTheConfigMapAndSurvivesARestart() throws Exception {
        KernelTestSupport.require("ip", "python3", "mount", "umount");
        net = PodNetwork.create("a", "b", "c", "d");
        bpffs = Files.createDirectories(tmp.resolve("bpffs"));
        KernelTestSupport.must(List.of("mount", "-t", "bpf", "bpf", bpffs.toString()));
        cluster = TestCluster.start(tmp.resolve("cluster"));
        kube = cluster.admin();
        cluster.create(new NamespaceBuilder().withNewMetadata().withName("x").endMetadata().build());
        for (String p : List.of("a", "b", "c", "d")) {
            cluster.create(new PodBuilder().withNewMetadata().withNamespace("x").withName(p).addToLabels("app", p).endMetadata()
                    .withNewSpec().withNodeName(NODE).addNewContainer().withName("c").withImage("registry.invalid/i").endContainer().endSpec()
                    .withNewStatus().withPhase("Running").withPodIP(net.address(p, false).toString())
                    .addNewPodIP(net.address(p, false).toString()).addNewPodIP(net.address(p, true).toString()).endStatus().build());
        }
        kube.resource(policyAdmitting("a")).create();
        Path config = kubeletStyleConfig(true);
        Path kubeconfig = cluster.agentKubeconfig();

        agent = startAgent(kubeconfig, config);
        await(() -> get(port, "/readyz").statusCode() == 200, "/readyz to answer 200");
        assertThat(get(port, "/metrics").body()).contains("npm_policy_apply_delay_seconds_bucket");
        assertThat(get(debugPort, "/debug/state").body()).contains("\"pods\": 4").contains("background=true");
        assertThat(net.connects("a", "b", false)).as("a is admitted").isTrue();
        assertThat(net.connects("a", "b", true)).isTrue();
        assertThat(net.connects("c", "b", false)).as("b admits a only").isFalse();

        // The ConfigMap changes: kubelet swaps the ..data link, the agent follows without a restart.
        swapConfig(config, false);
        await(() -> get(debugPort, "/debug/state").body().contains("background=false"), "NetPolInBackground to turn off");

        // A policy edit through the API server lands in the kernel.
        kube.resource(policyAdmitting("c")).update();
        await(() -> net.connects("c", "b", false), "c to be admitted after the edit");
        assertThat(net.connects("a", "b", false)).as("a no longer admitted").isFalse();

        // SIGKILL; enforcement stays while no agent runs, and a change made meanwhile lands after the restart.
        agent.toHandle().destroyForcibly();
        agent.waitFor();
        assertThat(net.connects("c", "b", false)).as("allowed while no agent runs").isTrue();
        assertThat(net.connects("a", "b", false)).as("denied while no agent runs").isFalse();
        kube.resource(policyAdmitting("a")).update();

        agent = startAgent(kubeconfig, config);
        List<String> lapses = new ArrayList<>();
        Instant deadline = Instant.now().plusSeconds(60);
        // Until the restarted agent has the new state in (a admitted, c not): b must never open to d, which
        // neither state admits, and c, which no policy selects, must never be cut off.
        int probes = 0;
        while (!(net.connects("a", "b", false) && !net.connects("c", "b", false))) {
            if (!agent.isAlive() || Instant.now().isAfter(deadline)) {
                throw new AssertionError("the restarted agent did not converge\n" + Files.readString(tmp.resolve("agent.log")));
            }
            if (net.connects("d", "b", false)) {
                lapses.add("d reached b at " + Instant.now());
            }
            if (!net.connects("b", "c", false)) {
                lapses.add("b could not reach c at " + Instant.now());
            }
            probes++;
        }
        assertThat(lapses).as("moments in which b was open to d or c was cut off, in %d probes during the restart", probes).isEmpty();
        assertThat(probes).as("probes while the restarted agent came up").isPositive();
        await(() -> get(port, "/readyz").statusCode() == 200, "/readyz after the restart");
        assertThat(net.connects("b", "c", false)).as("c is not isolated").isTrue();
    }

    private static io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy policyAdmitting(String from) {
        return new NetworkPolicyBuilder().withNewMetadata().withNamespace("x").withName("b-in").endMetadata()
                .withNewSpec().withNewPodSelector().addToMatchLabels("app", "b").endPodSelector()
                .addNewIngress().withFrom(new NetworkPolicyPeerBuilder().withNewPodSelector().addToMatchLabels("app", from).endPodSelector().build())
                .addNewPort().withPort(new IntOrString(PodNetwork.PORT)).endPort().endIngress().endSpec().build();
    }

    /** A directory laid out as kubelet projects a ConfigMap: the file is a link through {@code ..data} to a timestamped directory. */
    private Path kubeletStyleConfig(boolean background) throws IOException {
        port = freePort();
        debugPort = freePort();
        Path dir = Files.createDirectories(tmp.resolve("config"));
        Path first = Files.createDirectories(dir.resolve("..2026_11_30_00_00_00.1"));
        Files.writeString(first.resolve("npm-agent.json"), configJson(background));
        Files.createSymbolicLink(dir.resolve("..data"), first.getFileName());
        Files.createSymbolicLink(dir.resolve("npm-agent.json"), Path.of("..data/npm-agent.json"));
        return dir.resolve("npm-agent.json");
    }

    private void swapConfig(Path config, boolean background) throws IOException {
        Path dir = config.getParent();
        Path next = Files.createDirectories(dir.resolve("..2026_11_30_00_00_01.2"));
        Files.writeString(next.resolve("npm-agent.json"), configJson(background));
        Path link = dir.resolve("..data_tmp");
        Files.createSymbolicLink(link, next.getFileName());
        Files.move(link, dir.resolve("..data"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private String configJson(boolean background) {
        return "{\"NetPolInBackground\": " + background + ", \"ListeningAddress\": \"127.0.0.1\", \"ListeningPort\": " + port
                + ", \"DebugListeningPort\": " + debugPort + ", \"Backend\": \"bpf\", \"NetPolIntervalInMilliseconds\": 100}";
    }

    private Process startAgent(Path kubeconfig, Path config) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        return Daemon.of("npm-agent run", tmp.resolve("agent.log"), List.of(java, "-cp", System.getProperty("java.class.path"), "io.npmagent.agent.cli.Main", "run",
                "--kubeconfig", kubeconfig.toString(), "--config", config.toString(), "--netns", net.node().name(), "--bpffs", bpffs.toString(),
                "--poll-ms", "50"))
                .env("NODE_NAME", NODE).start().process();
    }

    private HttpResponse<String> get(int onPort, String path) {
        try {
            return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + onPort + path)).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            return new Unanswered();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private void await(BooleanSupplier check, String what) {
        Await.until(Duration.ofSeconds(60), "waiting for " + what, () -> {
            if (!agent.isAlive()) {
                throw new Await.Abort("the agent exited while waiting for " + what + "\n" + Logs.tail(tmp.resolve("agent.log"), 60));
            }
            return check.getAsBoolean();
        }, () -> Logs.tail(tmp.resolve("agent.log"), 60));
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** What a request that found no listener gets: 0, and no body. */
    private static final class Unanswered implements HttpResponse<String> {
        @Override public int statusCode() { return 0; }
        @Override public HttpRequest request() { return null; }
        @Override public java.util.Optional<HttpResponse<String>> previousResponse() { return java.util.Optional.empty(); }
        @Override public java.net.http.HttpHeaders headers() { return java.net.http.HttpHeaders.of(Map.of(), (a, b) -> true); }
        @Override public String body() { return ""; }
        @Override public java.util.Optional<javax.net.ssl.SSLSession> sslSession() { return java.util.Optional.empty(); }
        @Override public URI uri() { return null; }
        @Override public HttpClient.Version version() { return HttpClient.Version.HTTP_1_1; }
    }
}
