package io.npmagent.iptables.nft;

import io.npmagent.dataplane.desired.StateDiff;
import static io.npmagent.dataplane.model.PolicyFixtures.block;
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
import io.npmagent.dataplane.desired.DesiredState;
import io.npmagent.dataplane.desired.TierPolicies;
import io.npmagent.dataplane.tier.RuleAction;
import io.npmagent.iptables.TierFixtures;
import io.npmagent.iptables.TierOverlay;
import io.npmagent.dataplane.exec.CommandRunner;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the nft backend does, told once and run twice: over {@link FakeNft} ({@link NftBackendTest},
 * no root) and over nft in a network namespace of its own ({@link NftBackendKernelTest}). Apply, apply
 * again, edit, delete, restart and adopt, drift, a refused batch, uninstall. What the kernel holds is
 * read back the way the backend reads it ({@code nft -j list table}), so both worlds are judged alike.
 */
abstract class NftBackendContract {
    /** Where the backend's {@code nft} runs. */
    interface Nft extends AutoCloseable {
        /** What the backend runs nft through. */
        CommandRunner runner();

        /** Every script the backend sent, in order. */
        List<String> scripts();

        /** An edit by someone else, as a script. */
        void handEdit(String script);

        /** From now on, nft refuses any script that writes a rule into {@code chain} (null: none), as it refuses a rule the kernel cannot take. */
        void refuseRulesOf(String chain);

        boolean tableExists();

        @Override
        void close();
    }

    /** A fresh, empty nft for one test. */
    abstract Nft open();

    Nft nft;
    Metrics metrics;
    NftBackend backend;
    PolicyCompiler compiler;

    @BeforeEach
    void setUpWorld() {
        nft = open();
        metrics = new Metrics(new PrometheusRegistry());
        backend = newBackend();
        compiler = new PolicyCompiler(null);
    }

    @AfterEach
    void closeWorld() {
        if (nft != null) {
            nft.close();
        }
    }

    NftBackend newBackend() {
        return new NftBackend(nft.runner(), metrics, Duration.ofSeconds(30));
    }

    void apply(ClusterEvent e) {
        backend.apply(new Batch(compiler.apply(e).delta()));
    }

    void applyCluster() {
        NftFixtures.cluster().forEach(this::apply);
    }

    String last() {
        List<String> s = nft.scripts();
        return s.isEmpty() ? null : s.get(s.size() - 1);
    }

    /** What nft holds now, read as the backend reads it (handles aside when compared). */
    NftTable held() {
        NftTable t = new NftTable();
        if (nft.tableExists()) {
            t.load(nft.runner().run(FakeNft.LIST, "", Duration.ofSeconds(30)).stdout());
        }
        return t;
    }

    static String policyChain(String ns, String name, Direction d, Family f) {
        return NftNames.chain(new ChainId.PolicyChain(new PolicyKey(ns, name), d, f));
    }

    static String podChain(String ns, String name, Direction d, Family f) {
        return NftNames.chain(new ChainId.PodChain(new PodKey(ns, name), d, f));
    }

    /**
     * What a restart may rewrite of a table that holds what it wants: only chains whose policy drops log
     * (their prefixes carry attribution numbers, which are a run's own: the last run's decode to nothing
     * now), each whole in one transaction; no set, element or other chain.
     */
    static void onlyLoggedDropsRewritten(List<String> scripts) {
        assertThat(scripts).as("one transaction at most").hasSizeLessThanOrEqualTo(1);
        for (String script : scripts) {
            assertThat(script).doesNotContain("element", "add set", "delete");
            assertThat(chainsTouched(script)).allMatch(c -> c.startsWith("pod_") || c.startsWith("cnp_"));
            for (String chain : chainsTouched(script)) {
                assertThat(script).as("%s logs a drop", chain).containsPattern("add rule inet npm_agent " + chain + " .* prefix \"npm:D:");
            }
        }
    }

    /** The chains a script declares, writes, flushes or deletes. */
    static List<String> chainsTouched(String script) {
        Matcher m = Pattern.compile("(?m)^(?:add|flush|delete) chain inet npm_agent (\\S+)").matcher(script);
        return m.results().map(r -> r.group(1)).distinct().sorted().toList();
    }

    @Test
    void theWholeStateIsOneTransactionAndThenNothingMore() {
        backend.apply(NftFixtures.wholeCluster());
        assertThat(nft.scripts()).hasSize(1);

        assertThat(backend.reconcile()).as("nothing drifted").isZero();
        backend.apply(new Batch(DesiredDelta.EMPTY));
        assertThat(nft.scripts()).as("an empty batch or a clean reconcile writes nothing").hasSize(1);

        NftTable held = held();
        assertThat(backend.status().rules()).isEqualTo(held.rules());
        assertThat(backend.status().sets()).isEqualTo(held.setCount()).isEqualTo(16);
        assertThat(backend.status().setEntries()).isEqualTo(held.elements()).isEqualTo(17);
        assertThat(backend.status().policies()).isEqualTo(4);
        assertThat(metrics.nftRestoreLatency.labelValues("apply").getCount()).isEqualTo(1);
        assertThat(metrics.numIptablesRules.get()).isEqualTo(backend.status().rules());
        assertThat(metrics.numIpsets.get()).isEqualTo(backend.status().sets());
        assertThat(metrics.numIpsetEntries.get()).isEqualTo(backend.status().setEntries());
    }

    @Test
    void anEditRewritesOnlyThePolicysChains() {
        applyCluster();
        int before = nft.scripts().size();
        apply(new ClusterEvent.PolicyUpserted(NftFixtures.webPolicy(8000, 8200)));
        assertThat(nft.scripts()).hasSize(before + 1);
        assertThat(chainsTouched(last())).containsExactly(
                policyChain("x", "web", Direction.INGRESS, Family.IPV4), policyChain("x", "web", Direction.INGRESS, Family.IPV6));
        assertThat(last()).contains("tcp dport 8000-8200 accept").doesNotContain("element", "add set", "delete");
        assertThat(backend.reconcile()).as("and the kernel took it as written").isZero();
    }

    @Test
    void deletingAPolicyAndAPodTakesTheirChainsSetsAndMapElements() {
        applyCluster();
        Set<String> setsBefore = new TreeSet<>(held().setNames());
        apply(new ClusterEvent.PolicyDeleted(new PolicyKey("x", "api-egress")));
        apply(new ClusterEvent.PodDeleted(new PodKey("y", "client")));
        String both = String.join("", nft.scripts().subList(nft.scripts().size() - 2, nft.scripts().size()));
        assertThat(both).contains(
                "delete chain inet npm_agent " + policyChain("x", "api-egress", Direction.EGRESS, Family.IPV4),
                "delete chain inet npm_agent " + podChain("x", "api", Direction.EGRESS, Family.IPV6),
                "delete element inet npm_agent egress4 { 10.0.0.2 }",
                "delete element inet npm_agent ingress4 { 10.0.1.1 }",
                "delete chain inet npm_agent " + podChain("y", "client", Direction.INGRESS, Family.IPV4));
        NftTable held = held();
        assertThat(held.chainNames()).doesNotContain(
                policyChain("x", "api-egress", Direction.EGRESS, Family.IPV4), policyChain("x", "api-egress", Direction.EGRESS, Family.IPV6),
                podChain("x", "api", Direction.EGRESS, Family.IPV4), podChain("y", "client", Direction.INGRESS, Family.IPV4));
        setsBefore.removeAll(held.setNames());
        assertThat(setsBefore.stream().filter(n -> n.matches("[cxn][46]_\\w+"))).as("the ipBlock, its excepts, the named port").hasSize(4);
        assertThat(backend.reconcile()).isZero();
    }

    @Test
    void aPolicyNoLocalPodReachesHasNoChainOrSetUntilOneDoes() {
        applyCluster();
        NftTable before = held();
        int written = nft.scripts().size();
        apply(new ClusterEvent.PolicyUpserted(policy("x", "db").select(match("app", "db"))
                .ingress(rule(peers(block("172.16.0.0/12"), pods(match("app", "cache"))), ports(port("TCP", 5432)))).build()));
        assertThat(nft.scripts()).as("nothing jumps to x/db's chains: nothing written").hasSize(written);

        Pod db = Pod.builder("x", "db").labels(labels("app", "db")).ip("10.0.0.9").build();
        apply(new ClusterEvent.PodUpserted(db));
        assertThat(nft.scripts()).as("the pod, its policy's chain and sets: one transaction").hasSize(written + 1);
        String dbChain = policyChain("x", "db", Direction.INGRESS, Family.IPV4);
        assertThat(held().chainNames()).contains(dbChain, podChain("x", "db", Direction.INGRESS, Family.IPV4))
                .doesNotContain(policyChain("x", "db", Direction.INGRESS, Family.IPV6)).as("no IPv6 pod jumps to it");
        assertThat(last()).contains("172.16.0.0/12", "tcp dport 5432 accept");
        assertThat(backend.reconcile()).isZero();

        apply(new ClusterEvent.PodDeleted(db.key()));
        assertThat(held().sameAs(before)).as("chain and sets go with the last jump").isTrue();
        assertThat(backend.reconcile()).isZero();
    }

    @Test
    void aRestartedAgentAdoptsTheTableWithoutWritingIt() {
        applyCluster();
        NftTable before = held();
        int written = nft.scripts().size();

        NftBackend restarted = newBackend();
        restarted.apply(NftFixtures.wholeCluster());
        assertThat(nft.scripts()).as("one transaction at most").hasSizeLessThanOrEqualTo(written + 1);
        onlyLoggedDropsRewritten(nft.scripts().subList(written, nft.scripts().size()));
        assertThat(held().chainNames()).isEqualTo(before.chainNames());
        assertThat(held().setNames()).isEqualTo(before.setNames());
        assertThat(restarted.reconcile()).isZero();
    }

    @Test
    void aRestartedAgentWritesOnlyWhatDiffers() {
        applyCluster();
        PolicyCompiler edited = new PolicyCompiler(null);
        NftFixtures.cluster().forEach(edited::apply);
        edited.apply(new ClusterEvent.PolicyUpserted(NftFixtures.webPolicy(1, 2)));
        NftBackend restarted = newBackend();
        restarted.apply(new Batch(DesiredDelta.of(edited.snapshot())));
        assertThat(chainsTouched(last())).contains(
                policyChain("x", "web", Direction.INGRESS, Family.IPV4), policyChain("x", "web", Direction.INGRESS, Family.IPV6))
                .allMatch(c -> c.startsWith("pod_") || c.startsWith("cnp_") || c.startsWith("pol_"));
        assertThat(chainsTouched(last()).stream().filter(c -> c.startsWith("pol_"))).as("of the policy chains, only the edited one's")
                .containsExactlyInAnyOrder(policyChain("x", "web", Direction.INGRESS, Family.IPV4), policyChain("x", "web", Direction.INGRESS, Family.IPV6));
        assertThat(restarted.reconcile()).isZero();
    }

    @Test
    void aRefusedBatchChangesNothingAndIsForgotten() {
        applyCluster();
        NftTable before = held();
        String bad = policyChain("y", "bad", Direction.INGRESS, Family.IPV4);
        nft.refuseRulesOf(bad);
        Batch badBatch = new Batch(compiler.apply(new ClusterEvent.PolicyUpserted(policy("y", "bad").select(match("app", "client"))
                .ingress(rule(peers(pods(match("app", "web"))), ports(port("TCP", 1)))).build())).delta());
        int scripts = nft.scripts().size();
        assertThatThrownBy(() -> backend.apply(badBatch))
                .isInstanceOf(BackendException.class)
                .hasMessageContaining("nft exited 1")
                .satisfies(e -> assertThat(((BackendException) e).input()).contains(bad));
        assertThat(nft.scripts()).as("what the backend knew matched the kernel: no second try").hasSize(scripts + 1);
        assertThat(held().sameAs(before)).isTrue();
        assertThat(metrics.nftRestoreFailures.labelValues("apply").get()).isEqualTo(1);

        // Another batch lands without a trace of the refused one.
        apply(new ClusterEvent.PodUpserted(Pod.builder("x", "new").labels(labels("app", "web")).ip("10.0.0.9").build()));
        assertThat(last()).doesNotContain(bad).contains("10.0.0.9");
        assertThat(held().chainNames()).doesNotContain(bad);
        // The retry of the refused batch lands whole.
        nft.refuseRulesOf(null);
        backend.apply(badBatch);
        assertThat(last()).contains("add chain inet npm_agent " + bad);
        assertThat(held().chainNames()).contains(bad);
        assertThat(backend.reconcile()).isZero();
    }

    @Test
    void aBatchRefusedOverAHandEditIsRepairedWithIt() {
        applyCluster();
        nft.handEdit("delete element inet npm_agent ingress4 { 10.0.1.1 }\n");
        apply(new ClusterEvent.PodDeleted(new PodKey("y", "client")));
        assertThat(held().chainNames()).doesNotContain(podChain("y", "client", Direction.INGRESS, Family.IPV4));
        assertThat(backend.reconcile()).isZero();
    }

    @Test
    void reconcileRepairsDriftAndSweepsOrphans() {
        applyCluster();
        NftTable before = held();
        String pod = podChain("x", "web", Direction.INGRESS, Family.IPV4);
        String s6 = before.setNames().stream().filter(n -> n.startsWith("s6_")).findFirst().orElseThrow();
        nft.handEdit("""
                add rule inet npm_agent %s tcp dport 22 accept
                delete element inet npm_agent ingress6 { fd00::1 }
                add element inet npm_agent %s { fd00::99 }
                add chain inet npm_agent left_by_hand { type filter hook forward priority -5; policy drop; }
                add set inet npm_agent s4_aaaaaaaaaaaaaaaaaaaa { type ipv4_addr; }
                """.formatted(pod, s6));
        assertThat(held().sameAs(before)).isFalse();

        assertThat(backend.reconcile()).isEqualTo(5);
        assertThat(last()).contains("delete chain inet npm_agent handle ", "delete set inet npm_agent s4_aaaaaaaaaaaaaaaaaaaa",
                "delete element inet npm_agent " + s6 + " { fd00::99 }", "flush chain inet npm_agent " + pod)
                .as("a name the agent does not make is never spelled into a script").doesNotContain("left_by_hand");
        assertThat(held().sameAs(before)).isTrue();
        assertThat(backend.reconcile()).isZero();
    }

    @Test
    void theInputHooksChainIsThereAndAQuickReconcileRestoresIt() {
        applyCluster();
        NftTable before = held();
        assertThat(before.chainNames()).contains(NftNames.TO_NODE);
        assertThat(comments(NftNames.TO_NODE)).containsExactly("replies of allowed connections",
                "local pods to their node ipv4", "local pods to their node ipv6");
        assertThat(backend.quickReconcile()).isZero();
        nft.handEdit("flush chain inet npm_agent " + NftNames.TO_NODE + "\ndelete chain inet npm_agent " + NftNames.TO_NODE + "\n");

        assertThat(backend.quickReconcile()).isPositive();
        assertThat(held().sameAs(before)).isTrue();
        assertThat(backend.reconcile()).isZero();
    }

    @Test
    void uninstallDeletesTheTableWhateverIsThereAndTheNextBatchRebuildsIt() {
        backend.uninstall();
        assertThat(nft.tableExists()).isFalse();
        applyCluster();
        NftTable before = held();
        backend.uninstall();
        assertThat(nft.tableExists()).isFalse();
        backend.uninstall();
        assertThat(metrics.nftRestoreLatency.labelValues("uninstall").getCount()).isEqualTo(3);
        assertThat(backend.status().rules()).isZero();
        assertThat(metrics.numIptablesRules.get()).isZero();

        backend.apply(new Batch(DesiredDelta.EMPTY));
        assertThat(held().sameAs(before)).isTrue();
        assertThat(backend.reconcile()).isZero();
    }

    // ---- ClusterNetworkPolicy tiers -------------------------------------------------------------------

    /** What was last applied with tiers laid over the compiler's state (null: no tiers yet). */
    DesiredState tiered;

    void applyTiers(TierOverlay overlay) {
        backend.apply(tiersBatch(overlay));
    }

    Batch tiersBatch(TierOverlay overlay) {
        DesiredState next = overlay.over(compiler.snapshot());
        Batch batch = new Batch(StateDiff.between(tiered != null ? tiered : compiler.snapshot(), next));
        tiered = next;
        return batch;
    }

    static String cnpChain(String name, Direction d, Family f) {
        return NftNames.chain(new ChainId.ClusterPolicyChain(name, d, f));
    }

    /** The descriptions in the comments of a chain's rules, in order, as nft lists them. */
    /** The comments of a chain's rules, without the flow logging rules around each policy drop (those: {@code NftFlowRulesTest}). */
    List<String> comments(String chain) {
        Object root = Json.parse(nft.runner().run(FakeNft.LIST, "", Duration.ofSeconds(30)).stdout());
        List<String> out = new ArrayList<>();
        for (Object item : (List<?>) ((Map<?, ?>) root).get("nftables")) {
            if (item instanceof Map<?, ?> w && w.get("rule") instanceof Map<?, ?> r && chain.equals(r.get("chain"))
                    && !String.valueOf(r.get("comment")).matches("npm:[a-z2-7]{16} (log first|count): .*")) {
                out.add(String.valueOf(r.get("comment")).replaceFirst("^npm:[a-z2-7]{16} ?", ""));
            }
        }
        return out;
    }

    @Test
    void tiersAreTriedInOrderAroundNetworkPolicy() {
        applyCluster();
        applyTiers(TierFixtures.overlay());

        assertThat(comments(podChain("x", "web", Direction.INGRESS, Family.IPV4))).as("web: Admin, then its NetworkPolicy, final")
                .containsExactly("start", "admin adm-first", "admin adm-second", "end of admin tier", "policy x/deny-web", "policy x/web",
                        "drop: x/web isolated for ingress");
        assertThat(comments(podChain("x", "api", Direction.INGRESS, Family.IPV6))).as("api: Admin, then Baseline, then allow")
                .containsExactly("start", "admin " + NftRules.describe(TierFixtures.EVIL), "admin adm-second", "end of admin tier",
                        "baseline base", "baseline pass: allowed");
        assertThat(comments(podChain("x", "api", Direction.EGRESS, Family.IPV4))).as("api egress: NetworkPolicy isolates, Baseline never reached")
                .containsExactly("start", "policy x/api-egress", "drop: x/api isolated for egress, not to its node");
        assertThat(comments(cnpChain("adm-first", Direction.INGRESS, Family.IPV4)))
                .containsExactly("cnp adm-first ingress rule 0 pass", "cnp adm-first ingress rule 1 deny");
        assertThat(comments(cnpChain("adm-first", Direction.INGRESS, Family.IPV6))).as("an IPv4 network matches nothing in IPv6")
                .containsExactly("cnp adm-first ingress rule 1 deny");
        assertThat(held().chainNames()).as("no pod reaches base's egress").doesNotContain(cnpChain("base", Direction.EGRESS, Family.IPV4));
        String script = String.join("", nft.scripts());
        assertThat(script).contains("meta mark set meta mark | 0x00040000 return", "meta mark & 0x00040000 == 0x00000000 jump ")
                .doesNotContain("$(", "\u2603", "198.51.100.0/24");
        assertThat(backend.reconcile()).as("the kernel took it as written").isZero();
    }

    @Test
    void aPriorityEditRewritesOnlyPodChainsAndARuleEditOnlyThePolicysChains() {
        applyCluster();
        TierOverlay overlay = TierFixtures.overlay();
        applyTiers(overlay);
        applyTiers(overlay.tiers(TierFixtures.WEB, new TierPolicies(List.of("adm-second", "adm-first"), List.of(), List.of("base"), List.of())));
        assertThat(chainsTouched(last())).containsExactly(
                podChain("x", "web", Direction.INGRESS, Family.IPV4), podChain("x", "web", Direction.INGRESS, Family.IPV6));
        assertThat(comments(podChain("x", "web", Direction.INGRESS, Family.IPV4))).startsWith("start", "admin adm-second", "admin adm-first");

        applyTiers(overlay.policy("adm-second", List.of(TierOverlay.rule(0, RuleAction.ACCEPT, List.of(), TierOverlay.tcp(23))), List.of()));
        assertThat(chainsTouched(last())).containsExactly(
                cnpChain("adm-second", Direction.INGRESS, Family.IPV4), cnpChain("adm-second", Direction.INGRESS, Family.IPV6));
        assertThat(last()).contains("tcp dport 23 accept");
        assertThat(backend.reconcile()).isZero();
    }

    @Test
    void aClusterPolicyNotHeldFailsClosedAtItsPlaceUntilItLands() {
        applyCluster();
        TierOverlay overlay = TierFixtures.overlay()
                .tiers(TierFixtures.WEB, new TierPolicies(List.of("adm-first", "late", "adm-second"), List.of(), List.of(), List.of()));
        Batch batch = tiersBatch(overlay.policy("late",
                List.of(TierOverlay.rule(0, RuleAction.ACCEPT, List.of(TierFixtures.cidr("203.0.113.0/24")), List.of())), List.of()));
        // Part by part, as the queue retries a refused batch: "late"'s own part is refused (an accept rule: how the kernel world breaks one).
        nft.refuseRulesOf(cnpChain("late", Direction.INGRESS, Family.IPV4));
        for (Batch.Unit u : batch.units()) {
            try {
                backend.apply(u.batch());
            } catch (BackendException e) {
                assertThat(u.key()).isEqualTo(new Batch.UnitKey.ClusterPolicy("late"));
            }
        }
        assertThat(comments(podChain("x", "web", Direction.INGRESS, Family.IPV4))).as("what reaches late's place is dropped").containsExactly(
                "start", "admin adm-first", "admin policy not held: fail closed", "end of admin tier", "policy x/deny-web", "policy x/web",
                "drop: x/web isolated for ingress");
        assertThat(backend.reconcile()).isZero();

        nft.refuseRulesOf(null);
        backend.apply(new Batch(StateDiff.between(overlay.remove("late").over(compiler.snapshot()), tiered)));
        assertThat(comments(podChain("x", "web", Direction.INGRESS, Family.IPV4))).containsExactly(
                "start", "admin adm-first", "admin late", "admin adm-second", "end of admin tier", "policy x/deny-web", "policy x/web",
                "drop: x/web isolated for ingress");
        assertThat(backend.reconcile()).isZero();
    }

    @Test
    void aRestartedAgentAdoptsTiersAndUninstallLeavesNothingOfThem() {
        applyCluster();
        applyTiers(TierFixtures.overlay());
        NftTable before = held();
        int written = nft.scripts().size();

        NftBackend restarted = newBackend();
        restarted.apply(new Batch(DesiredDelta.of(tiered)));
        onlyLoggedDropsRewritten(nft.scripts().subList(written, nft.scripts().size()));
        assertThat(held().chainNames()).isEqualTo(before.chainNames());
        assertThat(restarted.reconcile()).isZero();

        restarted.uninstall();
        assertThat(nft.tableExists()).isFalse();
    }

    @Test
    void hostileNamesAndLabelsNeverReachTheScript() {
        backend.apply(new Batch(NftFixtures.hostile()));
        String script = last();
        Pattern statement = Pattern.compile(
                "(add|flush|delete) (table|chain|set|map|element|rule) inet npm_agent"
                        + "( [a-z][a-z0-9_]*( \\{ [a-z0-9_ .:;/,-]+ \\}| [a-z0-9@_ .,!=/{}-]+( prefix \"npm:[DA]:[IE]:[0-9]+\")? comment \"npm:[a-z2-7]{16}( [A-Za-z0-9._/: -]*)?\")?)?");
        assertThat(script.lines()).allSatisfy(l -> assertThat(l).matches(statement));
        assertThat(script).doesNotContain("$(", "`", "'", "\\", "reboot ", "\u2603").matches("\\p{ASCII}*");
        assertThat(held().rules()).isPositive();
        assertThat(backend.reconcile()).as("the kernel holds it as written").isZero();
    }
}
