package io.npmagent.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.iptables.kernel.KernelTestSupport;
import io.npmagent.iptables.kernel.Netns;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code npm-agent apply} then {@code uninstall}, in a namespace of the test's own. */
class ApplyUninstallKernelTest {
    private static final Path SHOP = Path.of("examples/shop");
    private Netns ns;

    @BeforeEach
    void namespace() {
        KernelTestSupport.require("ipset", "iptables-nft-restore", "iptables-legacy-restore", "nft");
        ns = Netns.create("cli");
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
        assertThat(first.out()).contains(backend + " holds 8 policies");
        String rules = ns.must(save, "-t", "filter").stdout();
        assertThat(rules).contains("-j NPM-FORWARD").contains("NPM-PI-");

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
        assertThat(ns.must("nft", "list", "table", "inet", "npm_agent").stdout()).contains("chain ingress");
        assertThat(CliRun.of("uninstall", "--backend", "nft", "--netns", ns.name()).exitCode()).isZero();
        assertThat(ns.must("nft", "list", "tables").stdout()).doesNotContain("npm_agent");
    }

    @ParameterizedTest
    @ValueSource(strings = {"bpf", "nope"})
    void anUnknownBackendIsAUsageError(String backend) {
        CliRun r = CliRun.of("uninstall", "--backend", backend, "--netns", ns.name());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("unknown backend \"" + backend + "\"");
    }

    private static String strip(String save) {
        return String.join("\n", save.lines().filter(l -> !l.startsWith("#")).toList());
    }
}
