package io.npmagent.harness.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.harness.process.Daemon;
import io.npmagent.harness.process.Logs;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The kit's namespaces and veths, with real packets; and what a killed run left is swept, what a live one has is not. */
class NetworkNamespaceKernelTest {

    @Test
    void aRoutedPodReachesADaemonInItsNodeAndClosingRemovesItsNamespace(@TempDir Path tmp) throws Exception {
        KernelTestSupport.require("python3");
        String podName;
        try (NetworkNamespace node = NetworkNamespace.forTest("node").forwarding(); NetworkNamespace pod = NetworkNamespace.forTest("pod")) {
            podName = pod.name();
            PodLink.routed(node, "vkit", pod, List.of(IpAddress.parse("10.77.0.2"), IpAddress.parse("fd77::2")));
            node.must("ip", "addr", "add", "10.77.0.1/32", "dev", "lo");
            Daemon server = Daemon.of("a server in the node", tmp.resolve("server.log"), List.of("python3", "-c",
                    "import socket\ns = socket.create_server(('10.77.0.1', 8080))\nprint('listening', flush=True)\nwhile True: s.accept()[0].close()"))
                    .inNetns(node.name()).start();
            try {
                server.awaitReady(Duration.ofSeconds(10), "listening", () -> Logs.tail(server.log(), 5).contains("listening"));
                assertThat(pod.run("timeout", "2", "bash", "-c", "</dev/tcp/10.77.0.1/8080").ok())
                        .as("the pod reaches its node through the veth, by its default route").isTrue();
            } finally {
                server.stop(Duration.ofSeconds(5));
            }
            assertThat(server.alive()).isFalse();
            assertThat(pod.must("ip", "-6", "route", "show", "default").stdout()).contains("via " + PodLink.GATEWAY_V6);
            assertThat(NetworkNamespace.exists(podName)).isTrue();
        }
        assertThat(NetworkNamespace.exists(podName)).isFalse();
    }

    @Test
    void aKilledRunsNamespacesAreSweptAndALiveOnesAreNot() {
        KernelTestSupport.require();
        // pid 2^22+1 is above the kernel's pid_max ceiling: never a running process.
        String dead = "npmt-4194305-1-left";
        try (NetworkNamespace mine = NetworkNamespace.forTest("mine")) {
            NetworkNamespace.create(dead);
            assertThat(NetworkNamespace.exists(dead)).isTrue();
            // What a new JVM's first forTest runs:
            assertThat(NetworkNamespace.sweepLeftovers()).contains(dead).doesNotContain(mine.name());
            assertThat(NetworkNamespace.exists(dead)).isFalse();
            assertThat(NetworkNamespace.exists(mine.name())).isTrue();
        } finally {
            NetworkNamespace.existing(dead).close();
        }
    }

    @Test
    void aNameTheKernelCannotTakeIsRefusedBeforeAnythingRuns() {
        assertThatThrownBy(() -> NetworkNamespace.create("a/b")).hasMessageContaining("network namespace name a/b");
        assertThatThrownBy(() -> NetworkNamespace.create("x".repeat(32))).hasMessageContaining("1 to 31");
    }
}
