package io.npmagent.iptables.nft;

import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static io.npmagent.dataplane.model.PolicyFixtures.peers;
import static io.npmagent.dataplane.model.PolicyFixtures.pods;
import static io.npmagent.dataplane.model.PolicyFixtures.policy;
import static io.npmagent.dataplane.model.PolicyFixtures.port;
import static io.npmagent.dataplane.model.PolicyFixtures.ports;
import static io.npmagent.dataplane.model.PolicyFixtures.rule;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.npmagent.dataplane.backend.BackendException;
import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.dataplane.kernel.Netns;
import io.npmagent.iptables.model.ChainId;
import io.npmagent.iptables.model.Family;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The nft backend against the real kernel, each test in a network namespace of its own: apply, read
 * back, apply again, edit, delete, restart and adopt, drift, a refused batch, uninstall.
 */
class NftBackendKernelTest {
    private Netns ns;
    private TapRunner tap;
    private Metrics metrics;
    private NftBackend backend;
    private PolicyCompiler compiler;

    @BeforeEach
    void namespace() {
        KernelTestSupport.require("nft");
        ns = Netns.create("nft");
        tap = new TapRunner(ns.runner());
        metrics = new Metrics(new PrometheusRegistry());
        backend = new NftBackend(tap, metrics, Duration.ofSeconds(30));
        compiler = new PolicyCompiler(null);
    }

    @AfterEach
    void remove() {
        if (ns != null) {
            ns.close();
        }
    }

    private void apply(ClusterEvent e) {
        backend.apply(new Batch(compiler.apply(e).delta()));
    }

    private void applyCluster() {
        NftFixtures.cluster().forEach(this::apply);
    }

    private String list() {
        return ns.must("nft", "list", "table", "inet", "npm_agent").stdout();
    }

    /** With handles: a chain or set rewritten gets new ones, so equal text means untouched. */
    private String listWithHandles() {
        return ns.must("nft", "-a", "list", "table", "inet", "npm_agent").stdout();
    }

    /** The table's chains, sets and maps, each with its text. */
    private static Map<String, String> blocks(String listing) {
        Map<String, String> out = new LinkedHashMap<>();
        Matcher m = Pattern.compile("(?ms)^\\t(?:chain|set|map) (\\S+) \\{.*?^\\t\\}$").matcher(listing);
        while (m.find()) {
            out.put(m.group(1), m.group());
        }
        return out;
    }

    private static Set<String> changedBlocks(String before, String after) {
        Map<String, String> b = blocks(before);
        Map<String, String> a = blocks(after);
        Set<String> changed = new HashSet<>();
        b.forEach((k, v) -> {
            if (!v.equals(a.get(k))) {
                changed.add(k);
            }
        });
        a.keySet().stream().filter(k -> !b.containsKey(k)).forEach(changed::add);
        return changed;
    }

    private static String policyChain(String ns, String name, Direction d, Family f) {
        return NftNames.chain(new ChainId.PolicyChain(new PolicyKey(ns, name), d, f));
    }

    private static String podChain(String ns, String name, Direction d, Family f) {
        return NftNames.chain(new ChainId.PodChain(new PodKey(ns, name), d, f));
    }

    @Test
    void appliesReadsBackAndIsIdempotent() {
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
        try (Netns fresh = Netns.create("nftc")) {
            assertThat(fresh.withInput(listing, "nft", "-c", "-f", "-").ok()).as("the listing is a valid nft script").isTrue();
        }
        assertThat(backend.status().rules()).isEqualTo(listing.lines().filter(l -> l.contains("comment \"npm:")).count());
        assertThat(metrics.numIpsets.get()).isEqualTo(16);

        int scripts = tap.scripts.size();
        assertThat(backend.reconcile()).as("nothing drifted").isZero();
        backend.apply(new Batch(DesiredDelta.EMPTY));
        assertThat(tap.scripts).as("nothing to write").hasSize(scripts);
        assertThat(list()).isEqualTo(listing);
    }

    @Test
    void anEditRewritesOnlyThePolicysChains() {
        applyCluster();
        String before = listWithHandles();
        apply(new ClusterEvent.PolicyUpserted(NftFixtures.webPolicy(8000, 8200)));
        String after = listWithHandles();
        assertThat(changedBlocks(before, after)).containsExactlyInAnyOrder(
                policyChain("x", "web", Direction.INGRESS, Family.IPV4), policyChain("x", "web", Direction.INGRESS, Family.IPV6));
        assertThat(after).contains("tcp dport 8000-8200 accept").doesNotContain("8000-8100");
    }

    @Test
    void deletingAPolicyAndAPodTakesTheirChainsSetsAndMapElements() {
        applyCluster();
        String before = list();
        apply(new ClusterEvent.PolicyDeleted(new PolicyKey("x", "api-egress")));
        apply(new ClusterEvent.PodDeleted(new PodKey("y", "client")));
        String after = list();
        Set<String> gone = new HashSet<>(blocks(before).keySet());
        gone.removeAll(blocks(after).keySet());
        assertThat(gone).contains(
                policyChain("x", "api-egress", Direction.EGRESS, Family.IPV4), policyChain("x", "api-egress", Direction.EGRESS, Family.IPV6),
                podChain("x", "api", Direction.EGRESS, Family.IPV4), podChain("y", "client", Direction.INGRESS, Family.IPV4));
        assertThat(gone.stream().filter(n -> n.matches("[cxn][46]_\\w+"))).as("the ipBlock, its excepts, the named port").hasSize(4);
        assertThat(blocks(after).get("egress4")).doesNotContain("10.0.0.2");
        assertThat(blocks(after).get("ingress4")).doesNotContain("10.0.1.1").contains("10.0.0.1");
        assertThat(after).doesNotContain("10.0.1.1");
        assertThat(backend.reconcile()).isZero();
    }

    @Test
    void aRestartedAgentAdoptsTheTableAndWritesOnlyWhatDiffers() {
        applyCluster();
        String before = listWithHandles();
        int scripts = tap.scripts.size();

        NftBackend restarted = new NftBackend(tap, metrics, Duration.ofSeconds(30));
        restarted.apply(NftFixtures.wholeCluster());
        assertThat(tap.scripts).as("the same state: nothing written").hasSize(scripts);
        assertThat(listWithHandles()).isEqualTo(before);
        assertThat(restarted.reconcile()).isZero();

        PolicyCompiler edited = new PolicyCompiler(null);
        NftFixtures.cluster().forEach(edited::apply);
        edited.apply(new ClusterEvent.PolicyUpserted(NftFixtures.webPolicy(1, 2)));
        NftBackend again = new NftBackend(tap, metrics, Duration.ofSeconds(30));
        again.apply(new Batch(DesiredDelta.of(edited.snapshot())));
        assertThat(changedBlocks(before, listWithHandles())).containsExactlyInAnyOrder(
                policyChain("x", "web", Direction.INGRESS, Family.IPV4), policyChain("x", "web", Direction.INGRESS, Family.IPV6));
        assertThat(again.reconcile()).isZero();
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
    void reconcileRepairsOtherDriftAndSweepsWhatIsNotOurs() {
        applyCluster();
        String before = list();
        String pod = podChain("x", "web", Direction.INGRESS, Family.IPV4);
        String s6 = blocks(before).keySet().stream().filter(n -> n.startsWith("s6_")).findFirst().orElseThrow();
        ns.withInput("""
                add rule inet npm_agent %s tcp dport 22 accept
                delete element inet npm_agent ingress6 { fd00::1 }
                add element inet npm_agent %s { fd00::99 }
                add chain inet npm_agent left_by_hand { type filter hook forward priority -5; policy drop; }
                add set inet npm_agent s4_aaaaaaaaaaaaaaaaaaaa { type ipv4_addr; }
                """.formatted(pod, s6), "nft", "-f", "-");
        assertThat(list()).contains("left_by_hand", "tcp dport 22");
        assertThat(backend.reconcile()).isEqualTo(5);
        assertThat(list()).isEqualTo(before);
    }

    @Test
    void aBatchRefusedOverAHandEditIsRepairedWithIt() {
        applyCluster();
        ns.must("nft", "delete", "element", "inet", "npm_agent", "ingress4", "{ 10.0.1.1 }");
        apply(new ClusterEvent.PodDeleted(new PodKey("y", "client")));
        assertThat(list()).doesNotContain(podChain("y", "client", Direction.INGRESS, Family.IPV4)).doesNotContain("10.0.1.1");
        assertThat(backend.reconcile()).isZero();
    }

    @Test
    void aBatchTheKernelRefusesLeavesTheRulesetAsItWas() {
        applyCluster();
        String before = listWithHandles();
        String bad = policyChain("y", "bad", Direction.INGRESS, Family.IPV4);
        // Break only the one policy's rule on its way to nft, as a rule the kernel cannot take would be.
        tap.rewrite = s -> s.lines()
                .map(l -> l.startsWith("add rule inet npm_agent " + bad + " ") ? l.replace(" accept comment", " acccept comment") : l)
                .reduce("", (a, l) -> a + l + "\n");
        Batch badBatch = new Batch(compiler.apply(new ClusterEvent.PolicyUpserted(policy("y", "bad").select(match("app", "client"))
                .ingress(rule(peers(pods(match("app", "web"))), ports(port("TCP", 1)))).build())).delta());
        int scripts = tap.scripts.size();
        assertThatThrownBy(() -> backend.apply(badBatch))
                .isInstanceOf(BackendException.class)
                .hasMessageContaining("nft exited 1").hasMessageContaining("Error");
        assertThat(tap.scripts).as("what the backend knew matched the kernel: no second try").hasSize(scripts + 1);
        assertThat(listWithHandles()).isEqualTo(before);
        assertThat(metrics.nftRestoreFailures.labelValues("apply").get()).isEqualTo(1);

        apply(new ClusterEvent.PolicyUpserted(NftFixtures.webPolicy(8000, 8200)));
        assertThat(list()).contains("8000-8200").doesNotContain(bad);
        tap.rewrite = s -> s;
        backend.apply(badBatch);
        assertThat(list()).contains("chain " + bad + " {");
        assertThat(backend.reconcile()).isZero();
    }

    @Test
    void uninstallDeletesTheTableWhateverIsThere() {
        backend.uninstall();
        applyCluster();
        String before = list();
        backend.uninstall();
        assertThat(ns.must("nft", "list", "tables").stdout()).doesNotContain("npm_agent");
        backend.uninstall();
        assertThat(metrics.nftRestoreLatency.labelValues("uninstall").getCount()).isEqualTo(3);

        backend.apply(new Batch(DesiredDelta.EMPTY));
        assertThat(blocks(list()).keySet()).isEqualTo(blocks(before).keySet());
        assertThat(backend.reconcile()).isZero();
    }

    @Test
    void hostileNamesLandAsHashesAndPlainComments() {
        backend.apply(new Batch(NftFixtures.hostile()));
        String listing = list();
        assertThat(listing).contains("comment \"npm:").doesNotContain("$(", "reboot)", "\u2603");
        assertThat(listing.lines().filter(l -> l.contains("comment"))).allSatisfy(l ->
                assertThat(l).matches("\\t\\t.* comment \"npm:[a-z2-7]{16}( [A-Za-z0-9._/: -]*)?\""));
        assertThat(backend.reconcile()).isZero();
        assertThat(List.of(listing.split("\n"))).anySatisfy(l -> assertThat(l).contains("tcp dport 80 accept"));
    }
}
