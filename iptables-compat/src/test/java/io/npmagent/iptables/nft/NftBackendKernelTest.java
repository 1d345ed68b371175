package io.npmagent.iptables.nft;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.exec.CommandRunner;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.harness.node.NetworkNamespace;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.iptables.TapRunner;
import io.npmagent.iptables.model.Family;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@link NftBackendContract} over nft and the real kernel, each test in a network namespace of its
 * own; and, here only, what nft itself prints of the table, and edits that need the kernel's handles.
 */
class NftBackendKernelTest extends NftBackendContract {
    private NetworkNamespace ns;
    private TapRunner tap;

    @Override
    Nft open() {
        KernelTestSupport.require("nft");
        ns = NetworkNamespace.forTest("nft");
        tap = new TapRunner(ns.runner());
        return new Nft() {
            @Override
            public CommandRunner runner() {
                return tap;
            }

            @Override
            public List<String> scripts() {
                return tap.inputs(FakeNft.APPLY);
            }

            @Override
            public void handEdit(String script) {
                assertThat(ns.withInput(script, "nft", "-f", "-").ok()).as("hand edit %s", script).isTrue();
            }

            @Override
            public void refuseRulesOf(String chain) {
                // Break the chain's rules on their way to nft, as a rule the kernel cannot take would be.
                tap.rewrite = (argv, s) -> chain == null || !argv.equals(FakeNft.APPLY) ? s : s.lines()
                        .map(l -> l.startsWith("add rule inet npm_agent " + chain + " ") ? l.replace(" accept comment", " acccept comment") : l)
                        .reduce("", (a, l) -> a + l + "\n");
            }

            @Override
            public boolean tableExists() {
                return ns.must("nft", "list", "tables").stdout().contains("npm_agent");
            }

            @Override
            public void close() {
                ns.close();
            }
        };
    }

    private String list() {
        return ns.must("nft", "list", "table", "inet", "npm_agent").stdout();
    }

    /** With handles: a chain or set rewritten gets new ones, so equal text means untouched. */
    private String listWithHandles() {
        return ns.must("nft", "-a", "list", "table", "inet", "npm_agent").stdout();
    }

    @Test
    void nftPrintsWhatWasMeantAndTakesItsOwnListingBack() {
        applyCluster();
        String listing = list();
        assertThat(listing).contains(
                "chain egress {", "type filter hook forward priority filter + 1; policy accept;",
                "chain ingress {", "type filter hook forward priority filter + 2; policy accept;",
                "ct state established,related accept", "ip saddr vmap @egress4", "ip6 daddr vmap @ingress6",
                "ip daddr . meta l4proto . th dport @n4_", "ip6 saddr != @x6_", "tcp dport 8000-8100 accept",
                "meta l4proto udp accept", "sctp dport 9000 accept", "10.0.0.1 . tcp . 8080", "fd00::1 . sctp . 9000",
                "elements = { 0.0.0.0/1, 128.0.0.0/1 }", "192.168.1.0/24", "10.0.0.1 : jump pod_in4_");
        assertThat(listing).as("an except inside another except is left out").doesNotContain("192.168.1.128/25");
        try (NetworkNamespace fresh = NetworkNamespace.forTest("nftc")) {
            assertThat(fresh.withInput(listing, "nft", "-c", "-f", "-").ok()).as("the listing is a valid nft script").isTrue();
        }
        assertThat(backend.status().rules()).isEqualTo(listing.lines().filter(l -> l.contains("comment \"npm:")).count());
    }

    @Test
    void whatIsNotWrittenKeepsItsHandles() {
        applyCluster();
        String before = listWithHandles();
        backend.apply(new Batch(DesiredDelta.EMPTY));
        assertThat(backend.reconcile()).isZero();
        NftBackend restarted = newBackend();
        restarted.apply(NftFixtures.wholeCluster());
        assertThat(restarted.reconcile()).as("a restart that finds it all in place").isZero();
        assertThat(withoutLoggedDrops(listWithHandles())).as("all but the chains whose drops log (this run's numbers)")
                .isEqualTo(withoutLoggedDrops(before));
    }

    /** A listing without the pod and ClusterNetworkPolicy chains: a restart rewrites those that log drops, with its own attribution numbers. */
    private static String withoutLoggedDrops(String listing) {
        return listing.replaceAll("(?s)\tchain (pod|cnp)_\\w+ \\{.*?\n\t\\}\n", "");
    }

    @Test
    void reconcilePutsBackARuleDeletedByHand() {
        applyCluster();
        String before = list();
        String chain = policyChain("x", "web", Direction.INGRESS, Family.IPV4);
        Matcher handle = Pattern.compile("tcp dport 8000-8100 accept comment \"[^\"]*\" # handle (\\d+)")
                .matcher(ns.must("nft", "-a", "list", "chain", "inet", "npm_agent", chain).stdout());
        assertThat(handle.find()).isTrue();
        ns.must("nft", "delete", "rule", "inet", "npm_agent", chain, "handle", handle.group(1));
        assertThat(ns.must("nft", "list", "chain", "inet", "npm_agent", chain).stdout()).doesNotContain("8000-8100");

        assertThat(backend.reconcile()).isPositive();
        assertThat(list()).isEqualTo(before);
        assertThat(backend.reconcile()).isZero();
    }

    @Test
    void anEditLandsAsNftPrintsIt() {
        applyCluster();
        apply(new ClusterEvent.PolicyUpserted(NftFixtures.webPolicy(8000, 8200)));
        assertThat(list()).contains("tcp dport 8000-8200 accept").doesNotContain("8000-8100");
    }

    @Test
    void hostileNamesLandAsHashesAndPlainComments() {
        backend.apply(new Batch(NftFixtures.hostile()));
        String listing = list();
        assertThat(listing).contains("comment \"npm:").doesNotContain("$(", "reboot)", "\u2603");
        assertThat(listing.lines().filter(l -> l.contains("comment"))).allSatisfy(l ->
                assertThat(l).matches("\\t\\t.* comment \"npm:[a-z2-7]{16}( [A-Za-z0-9._/: -]*)?\""));
        assertThat(List.of(listing.split("\n"))).anySatisfy(l -> assertThat(l).contains("tcp dport 80 accept"));
    }
}
