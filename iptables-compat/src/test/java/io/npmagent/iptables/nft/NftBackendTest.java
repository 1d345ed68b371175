package io.npmagent.iptables.nft;

import io.npmagent.iptables.Golden;

import static io.npmagent.dataplane.model.PolicyFixtures.labels;
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
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.npmagent.iptables.model.ChainId;
import io.npmagent.iptables.model.Family;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The backend's orchestration against {@link FakeNft}: what it writes (golden scripts), what it does
 * not write (adoption, idempotence), and what happens when nft refuses.
 */
class NftBackendTest {
    private FakeNft nft;
    private Metrics metrics;
    private NftBackend backend;
    private PolicyCompiler compiler;

    @BeforeEach
    void setUp() {
        nft = new FakeNft();
        metrics = new Metrics(new PrometheusRegistry());
        backend = new NftBackend(nft, metrics, Duration.ofSeconds(5));
        compiler = new PolicyCompiler(null);
    }

    private void apply(ClusterEvent e) {
        backend.apply(new Batch(compiler.apply(e).delta()));
    }

    private void applyCluster() {
        NftFixtures.cluster().forEach(this::apply);
    }

    private static String policyChain(String ns, String name, Direction d, Family f) {
        return NftNames.chain(new ChainId.PolicyChain(new PolicyKey(ns, name), d, f));
    }

    private static String podChain(String ns, String name, Direction d, Family f) {
        return NftNames.chain(new ChainId.PodChain(new PodKey(ns, name), d, f));
    }

    /** The chains a script declares, writes, flushes or deletes. */
    private static List<String> chainsTouched(String script) {
        Matcher m = Pattern.compile("(?m)^(?:add|flush|delete) chain inet npm_agent (\\S+)").matcher(script);
        return m.results().map(r -> r.group(1)).distinct().sorted().toList();
    }

    @Test
    void theWholeStateIsOneTransactionAndThenNothingMore() {
        backend.apply(NftFixtures.wholeCluster());
        assertThat(nft.scripts).hasSize(1);
        Golden.assertMatches("nft/first-apply.nft", nft.last());
        assertThat(nft.lists).as("the first call reads the table back").isEqualTo(1);

        assertThat(backend.reconcile()).as("nothing drifted").isZero();
        backend.apply(new Batch(DesiredDelta.EMPTY));
        assertThat(nft.scripts).as("an empty batch or a clean reconcile writes nothing").hasSize(1);

        String script = nft.scripts.get(0);
        assertThat(metrics.nftRestoreLatency.labelValues("apply").getCount()).isEqualTo(1);
        assertThat(backend.status().rules()).isEqualTo(script.lines().filter(l -> l.startsWith("add rule ")).count());
        assertThat(backend.status().sets()).isEqualTo(script.lines().filter(l -> l.startsWith("add set ")).count());
        assertThat(backend.status().setEntries()).isEqualTo(17);
        assertThat(metrics.numIptablesRules.get()).isEqualTo(backend.status().rules());
        assertThat(metrics.numIpsets.get()).isEqualTo(backend.status().sets());
        assertThat(metrics.numIpsetEntries.get()).isEqualTo(backend.status().setEntries());
        assertThat(backend.status().policies()).isEqualTo(4);
    }

    @Test
    void anEditRewritesOnlyThePolicysChains() {
        applyCluster();
        int before = nft.scripts.size();
        apply(new ClusterEvent.PolicyUpserted(NftFixtures.webPolicy(8000, 8200)));
        assertThat(nft.scripts).hasSize(before + 1);
        Golden.assertMatches("nft/edit-policy.nft", nft.last());
        assertThat(chainsTouched(nft.last())).containsExactly(
                policyChain("x", "web", Direction.INGRESS, Family.IPV4), policyChain("x", "web", Direction.INGRESS, Family.IPV6));
        assertThat(nft.last()).doesNotContain("element", "add set", "delete");
    }

    @Test
    void deletingAPolicyAndAPodTakesTheirChainsSetsAndMapElements() {
        applyCluster();
        apply(new ClusterEvent.PolicyDeleted(new PolicyKey("x", "api-egress")));
        apply(new ClusterEvent.PodDeleted(new PodKey("y", "client")));
        String both = String.join("", nft.scripts.subList(nft.scripts.size() - 2, nft.scripts.size()));
        Golden.assertMatches("nft/delete-policy-and-pod.nft", both);
        assertThat(both).contains(
                "delete chain inet npm_agent " + policyChain("x", "api-egress", Direction.EGRESS, Family.IPV4),
                "delete chain inet npm_agent " + podChain("x", "api", Direction.EGRESS, Family.IPV6),
                "delete element inet npm_agent egress4 { 10.0.0.2 }",
                "delete element inet npm_agent ingress4 { 10.0.1.1 }",
                "delete chain inet npm_agent " + podChain("y", "client", Direction.INGRESS, Family.IPV4));
        assertThat(both).containsPattern("delete set inet npm_agent c4_\\w+").containsPattern("delete set inet npm_agent x4_\\w+")
                .containsPattern("delete set inet npm_agent n4_\\w+");
        assertThat(backend.reconcile()).isZero();
    }

    @Test
    void aRestartedAgentAdoptsTheTableWithoutWritingIt() {
        applyCluster();
        String listing = nft.listing();
        int written = nft.scripts.size();

        NftBackend restarted = new NftBackend(nft, metrics, Duration.ofSeconds(5));
        restarted.apply(NftFixtures.wholeCluster());
        assertThat(nft.scripts).as("nothing differs, nothing is written").hasSize(written);
        assertThat(nft.listing()).isEqualTo(listing);
        assertThat(restarted.reconcile()).isZero();
    }

    @Test
    void aRestartedAgentWritesOnlyWhatDiffers() {
        applyCluster();
        PolicyCompiler edited = new PolicyCompiler(null);
        NftFixtures.cluster().forEach(edited::apply);
        edited.apply(new ClusterEvent.PolicyUpserted(NftFixtures.webPolicy(1, 2)));
        NftBackend restarted = new NftBackend(nft, metrics, Duration.ofSeconds(5));
        restarted.apply(new Batch(DesiredDelta.of(edited.snapshot())));
        assertThat(chainsTouched(nft.last())).containsExactly(
                policyChain("x", "web", Direction.INGRESS, Family.IPV4), policyChain("x", "web", Direction.INGRESS, Family.IPV6));
    }

    @Test
    void aRefusedBatchChangesNothingAndIsForgotten() {
        applyCluster();
        String listing = nft.listing();
        String bad = policyChain("y", "bad", Direction.INGRESS, Family.IPV4);
        nft.refuse = s -> s.contains(bad);
        ClusterEvent badPolicy = new ClusterEvent.PolicyUpserted(policy("y", "bad").select(match("app", "client"))
                .ingress(rule(peers(pods(match("app", "web"))), ports(port("TCP", 1)))).build());
        Batch badBatch = new Batch(compiler.apply(badPolicy).delta());
        int scripts = nft.scripts.size();
        assertThatThrownBy(() -> backend.apply(badBatch))
                .isInstanceOf(BackendException.class)
                .hasMessageContaining("nft exited 1").hasMessageContaining("Invalid argument")
                .satisfies(e -> assertThat(((BackendException) e).input()).contains(bad));
        assertThat(nft.scripts).as("what the backend knew matched: no second try").hasSize(scripts + 1);
        assertThat(nft.listing()).isEqualTo(listing);
        assertThat(metrics.nftRestoreFailures.labelValues("apply").get()).isEqualTo(1);

        // Another batch lands without a trace of the refused one.
        nft.refuse = s -> false;
        apply(new ClusterEvent.PodUpserted(Pod.builder("x", "new").labels(labels("app", "web")).ip("10.0.0.9").build()));
        assertThat(nft.last()).doesNotContain(bad).contains("10.0.0.9");
        // The retry of the refused batch lands whole.
        backend.apply(badBatch);
        assertThat(nft.last()).contains("add chain inet npm_agent " + bad);
        assertThat(backend.reconcile()).isZero();
    }

    @Test
    void aBatchRefusedOverAHandEditIsRepairedWithIt() {
        applyCluster();
        nft.execute("delete element inet npm_agent ingress4 { 10.0.1.1 }");
        apply(new ClusterEvent.PodDeleted(new PodKey("y", "client")));
        assertThat(nft.listing()).doesNotContain(podChain("y", "client", Direction.INGRESS, Family.IPV4));
        assertThat(backend.reconcile()).isZero();
    }

    /** What the fake holds, as the backend reads it: element order and handles aside. */
    private NftTable held() {
        NftTable t = new NftTable();
        t.load(nft.listing());
        return t;
    }

    @Test
    void reconcileRepairsDriftAndSweepsOrphans() {
        applyCluster();
        NftTable before = held();
        String s6 = before.setNames().stream().filter(n -> n.startsWith("s6_")).findFirst().orElseThrow();
        String web4 = policyChain("x", "web", Direction.INGRESS, Family.IPV4);
        nft.deleteRule(web4, 2);
        nft.execute("""
                add chain inet npm_agent left_by_hand { type filter hook forward priority -5; policy accept; }
                add rule inet npm_agent left_by_hand drop
                add set inet npm_agent s4_aaaaaaaaaaaaaaaaaaaa { type ipv4_addr; }
                add element inet npm_agent %s { fd00::99 }
                """.formatted(s6));
        assertThat(backend.reconcile()).isEqualTo(4);
        assertThat(nft.last()).contains("delete chain inet npm_agent handle ", "delete set inet npm_agent s4_aaaaaaaaaaaaaaaaaaaa",
                "delete element inet npm_agent " + s6 + " { fd00::99 }", "flush chain inet npm_agent " + web4)
                .doesNotContain("left_by_hand");
        assertThat(held().sameAs(before)).isTrue();
        assertThat(backend.reconcile()).isZero();
    }

    @Test
    void uninstallDeletesTheTableAndTheNextBatchRebuildsIt() {
        backend.uninstall();
        assertThat(nft.tableExists()).isFalse();
        applyCluster();
        NftTable before = held();
        backend.uninstall();
        assertThat(nft.tableExists()).isFalse();
        assertThat(backend.status().rules()).isZero();
        assertThat(metrics.numIptablesRules.get()).isZero();
        backend.apply(new Batch(DesiredDelta.EMPTY));
        assertThat(held().sameAs(before)).isTrue();
    }

    @Test
    void hostileNamesAndLabelsNeverReachTheScript() {
        backend.apply(new Batch(NftFixtures.hostile()));
        String script = nft.last();
        Golden.assertMatches("nft/hostile.nft", script);
        Pattern statement = Pattern.compile(
                "(add|flush|delete) (table|chain|set|map|element|rule) inet npm_agent"
                        + "( [a-z][a-z0-9_]*( \\{ [a-z0-9_ .:;/,-]+ \\}| [a-z0-9@_ .,!=-]+ comment \"npm:[a-z2-7]{16}( [A-Za-z0-9._/: -]*)?\")?)?");
        assertThat(script.lines()).allSatisfy(l -> assertThat(l).matches(statement));
        assertThat(script).doesNotContain("$(", "`", "'", "\\", "reboot ").matches("\\p{ASCII}*");
        assertThat(backend.reconcile()).isZero();
    }
}
