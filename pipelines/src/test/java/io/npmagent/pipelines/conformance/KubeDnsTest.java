package io.npmagent.pipelines.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.npmagent.harness.controlplane.KubeBinaries;
import io.npmagent.dataplane.exec.ProcessRunner;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import org.junit.jupiter.api.Test;

/**
 * The Corefile the conformance pipeline gives CoreDNS, served by the real CoreDNS (pipelines/kube-binaries)
 * on the loopback and asked by the real dig, as the DNS case asks it through the ClusterIP: the one name
 * over UDP and TCP, NXDOMAIN for the rest of its zone, and nothing forwarded (another zone is refused).
 * Needs no root and no kernel feature; without coredns or dig it is skipped, and in CI it fails.
 */
class KubeDnsTest {

    private static void require() throws IOException {
        String missing = null;
        if (!ProcessRunner.host().available("dig")) {
            missing = "dig (bind9-dnsutils) is not installed";
        } else if (!Files.isExecutable(KubeBinaries.dir().resolve("coredns"))) {
            missing = "no coredns in " + KubeBinaries.dir() + " (pipelines/kube-binaries coredns)";
        }
        if (missing != null) {
            if (KernelTestSupport.inCi()) {
                fail(missing);
            }
            assumeTrue(false, missing);
        }
    }

    /** A loopback port free for both UDP and TCP just now. */
    private static int freePort() throws IOException {
        InetAddress lo = InetAddress.getLoopbackAddress();
        for (int i = 0; i < 20; i++) {
            try (ServerSocket tcp = new ServerSocket(0, 1, lo); DatagramSocket udp = new DatagramSocket(tcp.getLocalPort(), lo)) {
                return tcp.getLocalPort();
            } catch (IOException e) {
                // that port's UDP side is taken: another
            }
        }
        throw new IOException("no free loopback port");
    }

    @Test
    void servesTheOneNameOverUdpAndTcpAndForwardsNothing() throws IOException {
        require();
        int port = freePort();
        try (KubeDns dns = KubeDns.start(null, "127.0.0.1", port)) {
            Dig.Lookup udp = Dig.lookup(null, "127.0.0.1", port, KubeDns.NAME, false);
            assertThat(udp.resolves(KubeDns.ADDRESS, "UDP")).as(udp.describe()).isTrue();
            Dig.Lookup tcp = Dig.lookup(null, "127.0.0.1", port, KubeDns.NAME, true);
            assertThat(tcp.resolves(KubeDns.ADDRESS, "TCP")).as(tcp.describe()).isTrue();
            Dig.Lookup other = Dig.lookup(null, "127.0.0.1", port, "other." + KubeDns.ZONE, false);
            assertThat(other.status()).isEqualTo("NXDOMAIN");
            Dig.Lookup elsewhere = Dig.lookup(null, "127.0.0.1", port, "example.com.", false);
            assertThat(elsewhere.status()).as("no forward plugin: a name outside the zone is refused, never asked upstream")
                    .isEqualTo("REFUSED");
        }
        Dig.Lookup after = Dig.lookup(null, "127.0.0.1", port, KubeDns.NAME, false);
        assertThat(after.status()).as("stopped at close").isNull();
    }
}
