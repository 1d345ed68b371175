package io.npmagent.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.bpf.libbpf.Capabilities;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.harness.node.NetworkNamespace;
import io.npmagent.harness.node.PodLink;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code npm-agent apply} then {@code uninstall}, in a namespace of the test's own. */
class ApplyUninstallKernelTest {
    private static final Path SHOP = Path.of("examples/shop");
    private NetworkNamespace ns;

    @BeforeEach
    void namespace() {
        KernelTestSupport.require("ipset", "iptables-nft-restore", "iptables-legacy-restore", "nft", "tc", "mount", "umount");
        ns = NetworkNamespace.forTest("cli");
    }

    @AfterEach
    void remove() {
        ns.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"iptables-nft", "iptables-legacy"})
    void applyIsIdempotentAndUninstallRemovesEverything(String backend) {
        String save = backend + "-save";
        CliRun first = CliRun.of("apply", "--manifests", SHOP.toString(), "--backend", backend, "--netns", ns.name());
        assertThat(first.exitCode()).as(first.err()).isZero();
        assertThat(first.out()).contains(backend + " holds 11 policies"); // 8 NetworkPolicies, 3 ClusterNetworkPolicies
        String rules = ns.must(save, "-t", "filter").stdout();
        assertThat(rules).contains("-j NPM-FORWARD").contains("-A INPUT ").contains("-j NPM-INPUT").contains("NPM-PI-");

        CliRun again = CliRun.of("apply", "--manifests", SHOP.toString(), "--backend", backend, "--netns", ns.name());
        assertThat(again.exitCode()).isZero();
        assertThat(strip(ns.must(save, "-t", "filter").stdout())).isEqualTo(strip(rules));

        CliRun uninstall = CliRun.of("uninstall", "--backend", backend, "--netns", ns.name());
        assertThat(uninstall.exitCode()).as(uninstall.err()).isZero();
        assertThat(ns.must(save, "-t", "filter").stdout()).doesNotContain("NPM");
        assertThat(ns.must("ipset", "list", "-n").stdout()).doesNotContain("npm-");
    }

    @Test
    void theNftBackendAppliesAndUninstallsItsTable() {
        CliRun first = CliRun.of("apply", "--manifests", SHOP.toString(), "--backend", "nft", "--netns", ns.name());
        assertThat(first.exitCode()).as(first.err()).isZero();
        assertThat(ns.must("nft", "list", "table", "inet", "npm_agent").stdout()).contains("chain ingress").contains("chain to_node");
        assertThat(CliRun.of("uninstall", "--backend", "nft", "--netns", ns.name()).exitCode()).isZero();
        assertThat(ns.must("nft", "list", "tables").stdout()).doesNotContain("npm_agent");
    }

    /**
     * The eBPF backend's state outlives {@code apply} (pins and tc filters are the enforcement); uninstall
     * takes both away, and {@code auto} uninstalls what every backend left.
     */
    @Test
    void theBpfBackendAppliesAndUninstallsItsPinsAndFilters(@TempDir Path tmp) throws IOException {
        Path bpffs = Files.createDirectories(tmp.resolve("bpffs"));
        KernelTestSupport.must(List.of("mount", "-t", "bpf", "bpf", bpffs.toString()));
        try {
            PodLink.vethWithin(ns, "veth1", "eth0");
            ns.must("ip", "route", "add", "10.244.1.10/32", "dev", "veth1");
            CliRun first = CliRun.of("apply", "--manifests", SHOP.toString(), "--backend", "bpf", "--netns", ns.name(),
                    "--bpffs", bpffs.toString());
            assertThat(first.exitCode()).as(first.err()).isZero();
            assertThat(first.out()).contains("bpf holds 11 policies").contains("1 endpoints");
            assertThat(ns.must("tc", "filter", "show", "dev", "veth1", "ingress").stdout()).contains("npm_from_pod");
            try (Stream<Path> pins = Files.list(bpffs.resolve("npm-agent"))) {
                assertThat(pins.map(p -> p.getFileName().toString())).contains("npm_policy", "npm_ipcache", "prog_npm_to_pod");
            }
            ns.must("nft", "add", "table", "inet", "npm_agent"); // as if an nft run had been here too

            CliRun uninstall = CliRun.of("uninstall", "--netns", ns.name(), "--bpffs", bpffs.toString());
            assertThat(uninstall.exitCode()).as(uninstall.err()).isZero();
            assertThat(uninstall.out()).contains("bpf").contains("nft");
            assertThat(ns.must("tc", "filter", "show", "dev", "veth1", "ingress").stdout()).doesNotContain("npm_from_pod");
            assertThat(Files.exists(bpffs.resolve("npm-agent"))).isFalse();
            assertThat(ns.must("nft", "list", "tables").stdout()).doesNotContain("npm_agent");
        } finally {
            KernelTestSupport.must(List.of("umount", bpffs.toString()));
        }
    }

    /**
     * {@code --bbr} makes BBR the default congestion control of the namespace the agent works in (which
     * pods' namespaces copy when they are created) where the kernel allows, and says why not elsewhere.
     */
    @Test
    void bbrIsTurnedOnWhereTheKernelAllowsIt(@TempDir Path tmp) throws IOException {
        Path bpffs = Files.createDirectories(tmp.resolve("bpffs"));
        KernelTestSupport.must(List.of("mount", "-t", "bpf", "bpf", bpffs.toString()));
        try {
            ns.must("sysctl", "-qw", "net.ipv4.tcp_congestion_control=reno"); // allowed in any namespace
            CliRun r = CliRun.of("apply", "--manifests", SHOP.toString(), "--backend", "bpf", "--netns", ns.name(),
                    "--bpffs", bpffs.toString(), "--bbr");
            assertThat(r.exitCode()).as(r.err()).isZero();
            String now = ns.must("sysctl", "-n", "net.ipv4.tcp_congestion_control").stdout().strip();
            boolean available = ns.must("sysctl", "-n", "net.ipv4.tcp_available_congestion_control").stdout().contains("bbr");
            if (Capabilities.timestampsKeptAcrossNamespaces() && available) {
                assertThat(r.out()).contains("bbr: the default congestion control for pods created from now on (was reno)");
                assertThat(now).isEqualTo("bbr");
            } else {
                assertThat(r.out()).contains("bbr: refused: ");
                assertThat(now).isEqualTo("reno");
            }
            CliRun iptables = CliRun.of("apply", "--manifests", SHOP.toString(), "--backend", "iptables-nft", "--netns", ns.name(), "--bbr");
            assertThat(iptables.out()).contains("bbr: refused: only the eBPF backend manages bandwidth");
        } finally {
            CliRun.of("uninstall", "--netns", ns.name(), "--bpffs", bpffs.toString());
            KernelTestSupport.must(List.of("umount", bpffs.toString()));
        }
    }

    @Test
    void anUnknownBackendIsAUsageError() {
        CliRun r = CliRun.of("uninstall", "--backend", "nope", "--netns", ns.name());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("unknown backend \"nope\"");
    }

    private static String strip(String save) {
        return String.join("\n", save.lines().filter(l -> !l.startsWith("#")).toList());
    }
}
