package io.npmagent.iptables;

import io.npmagent.dataplane.desired.StateDiff;
import static io.npmagent.dataplane.model.PolicyFixtures.block;
import static io.npmagent.dataplane.model.PolicyFixtures.labels;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static io.npmagent.dataplane.model.PolicyFixtures.named;
import static io.npmagent.dataplane.model.PolicyFixtures.namespaces;
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
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.CommandRunner;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.npmagent.iptables.detect.IptablesVariant;
import io.npmagent.iptables.model.ChainId;
import io.npmagent.iptables.model.Family;
import io.npmagent.iptables.model.Names;
import io.npmagent.iptables.render.IptablesRules;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import io.npmagent.dataplane.flow.FlowSettings;
import io.npmagent.iptables.ipset.IpsetFlowSets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the iptables backend does, told once and run over {@link FakeIptables} ({@link IptablesBackendTest},
 * no root) and over the real tools in a network namespace, for both variants
 * ({@code IptablesBackendKernelTest}): apply, read back, apply again, edit, delete, restart and adopt,
 * drift, a refused restore, uninstall. The kernel is looked at with the same tools in both worlds
 * ({@code iptables-save}, {@code ipset save}), and a refusal is made the same way: the tap gives one
 * rule a match the kernel does not have.
 */
public abstract class IptablesBackendContract {
    /** A match no kernel has: a rule carrying it is refused by {@code iptables-restore}. */
    static final String NO_SUCH_MATCH = "-m npm-no-such-match";

    protected abstract IptablesVariant variant();

    /** A fresh, empty kernel for one test, as the runner of its tools. */
    protected abstract CommandRunner openKernel();

    protected abstract void closeKernel();

    CommandRunner kernel;
    TapRunner tap;
    Metrics metrics;
    PolicyCompiler compiler;
    /** Restore inputs with a rule line containing this get {@link #NO_SUCH_MATCH} in that rule; null: none. */
    String refuseRulesWith;

    @BeforeEach
    void openWorld() {
        kernel = openKernel();
        tap = new TapRunner(kernel);
        tap.rewrite = (argv, in) -> refuseRulesWith == null || !argv.get(0).endsWith("-restore") || argv.get(0).startsWith("ipset") ? in
                : String.join("\n", in.lines().map(l -> l.startsWith("-A ") && l.contains(refuseRulesWith)
                        ? l.replaceFirst("^(-A \\S+) ", "$1 " + NO_SUCH_MATCH + " ") : l).toList()) + "\n";
        metrics = new Metrics(new PrometheusRegistry());
        compiler = new PolicyCompiler(null);
    }

    @AfterEach
    void closeWorld() {
        if (kernel != null) {
            closeKernel();
        }
    }

    IptablesBackend backend() {
        return new IptablesBackend(variant(), tap, metrics, IptablesBackend.Settings.DEFAULTS);
    }

    private String must(List<String> argv, String input) {
        CommandResult r = kernel.run(argv, input, Duration.ofSeconds(30));
        assertThat(r.ok()).as("%s: %s", argv, r.stderr()).isTrue();
        return r.stdout();
    }

    /** Both families' filter tables, without the save tools' dated comment lines. */
    String save() {
        String text = must(List.of(variant().save(Family.IPV4), "-t", "filter"), "")
                + must(List.of(variant().save(Family.IPV6), "-t", "filter"), "");
        return String.join("\n", text.lines().filter(l -> !l.startsWith("#")).toList());
    }

    String sets() {
        return must(List.of("ipset", "save"), "");
    }

    /** An edit by someone else: {@code lines} in the IPv4 filter table. */
    void handEdit(String... lines) {
        must(List.of(variant().restore(Family.IPV4), "--noflush", "-w", "10"), "*filter\n" + String.join("\n", lines) + "\nCOMMIT\n");
    }

    void handEditSets(String... lines) {
        must(List.of("ipset", "restore"), String.join("\n", lines) + "\n");
    }

    public static ClusterEvent[] cluster() {
        return new ClusterEvent[] {
            new ClusterEvent.NamespaceUpserted(new Namespace("x", labels("team", "a"))),
            new ClusterEvent.PodUpserted(Pod.builder("x", "web").labels(labels("app", "web")).ip("10.0.0.1").ip("fd00::1")
                    .port("http", 8080, Protocol.TCP).build()),
            new ClusterEvent.PodUpserted(Pod.builder("x", "api").labels(labels("app", "api")).ip("10.0.0.2").ip("fd00::2").build()),
            new ClusterEvent.PolicyUpserted(policy("x", "web").select(match("app", "web"))
                    .ingress(rule(peers(pods(match("app", "api")), namespaces(match("team", "b"))), ports(named(null, "http"))),
                            rule(peers(block("192.168.0.0/16", "192.168.1.0/24"), block("::/0")), ports(port("UDP", 53))))
                    .build()),
            new ClusterEvent.PolicyUpserted(policy("x", "api-egress").select(match("app", "api")).types("Egress")
                    .egress(rule(peers(block("0.0.0.0/0", "10.0.0.0/8")), null)).build()),
        };
    }

    IptablesBackend applied() {
        IptablesBackend b = backend();
        for (ClusterEvent e : cluster()) {
            apply(b, e);
        }
        return b;
    }

    void apply(IptablesBackend b, ClusterEvent e) {
        b.apply(new Batch(compiler.apply(e).delta()));
    }

    /** The compiler's whole state as one batch: what a restarted agent's first batch holds. */
    DesiredDelta everything() {
        return DesiredDelta.of(compiler.snapshot());
    }

    /** Restores (of either tool) run since call {@code from}. */
    List<TapRunner.Call> restoresSince(int from) {
        List<TapRunner.Call> calls = tap.calls();
        return calls.subList(from, calls.size()).stream().filter(c -> c.argv().get(0).endsWith("-restore")
                || c.argv().equals(List.of("ipset", "restore"))).toList();
    }

    @Test
    void appliesReadsBackAndIsIdempotent() {
        IptablesBackend b = applied();
        String rules = save();
        assertThat(rules).contains("-A FORWARD -m comment --comment \"npm:forward npm-agent NetworkPolicy\" -j NPM-FORWARD");
        assertThat(rules).contains("-A INPUT -m comment --comment \"npm:input npm-agent pods to their node\" -j NPM-INPUT");
        assertThat(rules).contains("--match-set npm-n4-").contains("--match-set npm-n6-").contains("-j DROP");
        assertThat(sets()).contains("192.168.1.0/24 nomatch").contains("add npm-c6-").contains("0.0.0.0/1").contains("10.0.0.1,tcp:8080");

        int calls = tap.calls().size();
        assertThat(b.reconcile()).as("nothing drifted").isZero();
        b.apply(new Batch(DesiredDelta.EMPTY));
        assertThat(restoresSince(calls)).as("nothing written").isEmpty();
        assertThat(save()).isEqualTo(rules);
        assertThat((long) b.status().sets()).isEqualTo(sets().lines().filter(l -> l.startsWith("create ")).count());
        assertThat(metrics.numIpsets.get()).isEqualTo(b.status().sets());
    }

    @Test
    void anEditRewritesOnlyThePolicysChain() {
        IptablesBackend b = applied();
        String before = save();
        String webChain = before.lines().filter(l -> l.contains("x/web ingress[0]")).findFirst().orElseThrow().split(" ")[1];

        apply(b, new ClusterEvent.PolicyUpserted(policy("x", "web").select(match("app", "web"))
                .ingress(rule(peers(pods(match("app", "api"))), ports(port("TCP", 9090)))).build()));

        String after = save();
        assertThat(changedChains(before, after)).containsExactly(webChain);
        assertThat(after).contains("--dport 9090").doesNotContain("192.168.0.0");
        assertThat(sets()).as("the ipBlock's set went with its last rule").doesNotContain("192.168.1.0/24");
    }

    @Test
    void laterBatchesWriteOnlyTheMembersThatChanged() {
        IptablesBackend b = applied();
        apply(b, new ClusterEvent.NamespaceUpserted(new Namespace("z", labels("team", "b"))));
        String rules = save();
        Pod peer = Pod.builder("z", "peer").ip("10.0.0.3").build();

        // A new peer of x/web's namespace selector, in a namespace no policy isolates: only set members change.
        int calls = tap.calls().size();
        apply(b, new ClusterEvent.PodUpserted(peer));
        List<TapRunner.Call> added = restoresSince(calls);
        assertThat(added).hasSize(1);
        assertThat(added.get(0).stdin().lines()).isNotEmpty().allMatch(l -> l.startsWith("add npm-s4-") && l.endsWith(" 10.0.0.3 -exist"));

        calls = tap.calls().size();
        apply(b, new ClusterEvent.PodDeleted(peer.key()));
        List<TapRunner.Call> deleted = restoresSince(calls);
        assertThat(deleted).hasSize(1);
        assertThat(deleted.get(0).stdin().lines()).isNotEmpty().allMatch(l -> l.startsWith("del npm-s4-") && l.endsWith(" 10.0.0.3 -exist"));
        assertThat(sets()).doesNotContain("10.0.0.3");
        assertThat(save()).isEqualTo(rules);
    }

    @Test
    void deletingPoliciesAndPodsRemovesTheirChainsAndSets() {
        IptablesBackend b = applied();
        apply(b, new ClusterEvent.PolicyDeleted(new PolicyKey("x", "web")));
        apply(b, new ClusterEvent.PodDeleted(PodKey.parse("x/api")));

        String rules = save();
        assertThat(rules).doesNotContain("NPM-PI-").doesNotContain("NPM-I-").doesNotContain("NPM-E-");
        // x/api-egress still exists but selects no local pod: no chain jumps to its chain, so it goes, and its ipBlock's set.
        assertThat(rules).doesNotContain("NPM-PE-");
        assertThat(sets()).doesNotContain("npm-s4-").doesNotContain("npm-n4-").doesNotContain("npm-c4-");
        assertThat(b.reconcile()).isZero();
    }

    @Test
    void aPolicyNoLocalPodReachesHasNoChainOrSetUntilOneDoes() {
        IptablesBackend b = applied();
        String rules = save();
        apply(b, new ClusterEvent.PolicyUpserted(policy("x", "db").select(match("app", "db"))
                .ingress(rule(peers(block("172.16.0.0/12"), pods(match("app", "cache"))), ports(port("TCP", 5432)))).build()));
        assertThat(save()).as("nothing jumps to x/db's chain: not written").isEqualTo(rules);
        assertThat(sets()).doesNotContain("172.16.0.0/12");

        Pod db = Pod.builder("x", "db").labels(labels("app", "db")).ip("10.0.0.9").build();
        apply(b, new ClusterEvent.PodUpserted(db));
        assertThat(save()).contains("x/db ingress").contains("--dport 5432");
        assertThat(sets()).contains("172.16.0.0/12");
        assertThat(b.reconcile()).isZero();

        apply(b, new ClusterEvent.PodDeleted(db.key()));
        assertThat(save()).isEqualTo(rules);
        assertThat(sets()).doesNotContain("172.16.0.0/12");
        assertThat(b.reconcile()).isZero();
    }

    @Test
    void aRestartedAgentAdoptsWhatItFindsWithoutWritingIt() {
        applied();
        String rules = save();
        String ipsets = sets();
        int calls = tap.calls().size();

        // A new agent: its first batch is the whole desired state, which the kernel already holds.
        IptablesBackend restarted = backend();
        restarted.apply(new Batch(everything()));

        onlyLoggedDropsRewritten(restoresSince(calls));
        assertThat(withoutRunNumbers(save())).isEqualTo(withoutRunNumbers(rules));
        assertThat(sets()).isEqualTo(ipsets);
        assertThat(restarted.reconcile()).isZero();
    }

    @Test
    void aRestartedAgentRemovesWhatTheDesiredStateNoLongerHas() {
        applied();
        compiler.apply(new ClusterEvent.PolicyDeleted(new PolicyKey("x", "web")));
        IptablesBackend restarted = backend();
        restarted.apply(new Batch(everything()));

        assertThat(save()).doesNotContain("NPM-PI-").contains("NPM-PE-");
        assertThat(sets()).doesNotContain("npm-n4-");
    }

    @Test
    void policyDropsLogAndCountPerFlowIntoTheirOwnSets() {
        applied();
        String rules = save();
        for (String set : IpsetFlowSets.names()) {
            assertThat(sets()).as("made before the chains, whether or not reports are started").contains("create " + set + " hash:ip,port,ip");
        }
        assertThat(rules).contains("--add-set npm-flows-in4 src,dst,dst").contains("--add-set npm-flows-eg6 src,dst,dst")
                .containsPattern("-j NFLOG .*--nflog-prefix \"?npm:D:I:[1-9]").containsPattern("-j NFLOG .*--nflog-prefix \"?npm:D:E:[1-9]");
        assertThat(rules.lines().filter(l -> l.contains("-j NFLOG"))).as("no name in a prefix, only the agent's tokens")
                .allMatch(l -> l.replaceAll("--comment \"[^\"]*\"", "").matches(".*--nflog-prefix \"?npm:D:[IE]:[0-9]+\"? .*"));
    }

    @Test
    void flowsOffRenderPlainDropsAndAFlowSetDestroyedByHandIsBackAfterAQuickReconcile() {
        IptablesBackend b = applied();
        b.flows().start(FlowSettings.OFF, r -> { });
        String rules = save();
        assertThat(rules).as("drops plain again").doesNotContain("NFLOG").doesNotContain("npm-flows-").contains("-j DROP");
        assertThat(b.reconcile()).isZero();

        handEditSets("destroy npm-flows-in4"); // nothing names it now, so the kernel lets it go
        assertThat(sets()).doesNotContain("create npm-flows-in4 ");
        assertThat(b.quickReconcile()).as("the quick look sees the set missing").isPositive();
        assertThat(sets()).contains("create npm-flows-in4 ");
        assertThat(save()).isEqualTo(rules);
        assertThat(b.reconcile()).isZero();
        b.close();
    }

    @Test
    void driftIsRepairedByReconcile() {
        IptablesBackend b = applied();
        String rules = save();
        String ipsets = sets();
        String dropChain = rules.lines().filter(l -> l.contains("-j DROP")).findFirst().orElseThrow().split(" ")[1];
        handEdit("-D " + dropChain + " 3", "-D FORWARD 1", "-D INPUT 1");
        handEditSets("del " + ipsets.lines().filter(l -> l.contains(",tcp:8080")).findFirst().orElseThrow().split(" ")[1]
                + " 10.0.0.1,tcp:8080");
        assertThat(save()).isNotEqualTo(rules);

        assertThat(b.reconcile()).isGreaterThanOrEqualTo(4);

        assertThat(save()).isEqualTo(rules);
        assertThat(sets()).contains("10.0.0.1,tcp:8080");
        assertThat(b.reconcile()).isZero();
    }

    @Test
    void theQuickReconcileSeesAFlushedForwardChain() {
        IptablesBackend b = applied();
        String rules = save();
        assertThat(b.quickReconcile()).isZero();
        handEdit("-D FORWARD 1");

        assertThat(b.quickReconcile()).isPositive();
        assertThat(save()).isEqualTo(rules);
    }

    @Test
    void theQuickReconcileSeesAMissingInputJump() {
        IptablesBackend b = applied();
        String rules = save();
        handEdit("-D INPUT 1");

        assertThat(b.quickReconcile()).isPositive();
        assertThat(save()).isEqualTo(rules);
    }

    @Test
    void theJumpsAreKeptFirstAheadOfTheHostsOwnRules() {
        IptablesBackend b = applied();
        handEdit("-I FORWARD 1 -s 192.0.2.1/32 -j ACCEPT", "-I INPUT 1 -s 192.0.2.1/32 -j ACCEPT");

        assertThat(b.quickReconcile()).as("both jumps moved back to the top, IPv4 only").isEqualTo(2);
        for (String hook : new String[] {"FORWARD", "INPUT"}) {
            List<String> rules = must(List.of(variant().save(Family.IPV4), "-t", "filter"), "").lines()
                    .filter(l -> l.startsWith("-A " + hook + " ")).toList();
            assertThat(rules).as(hook).hasSize(2);
            assertThat(rules.get(0)).as(hook).endsWith(" -j NPM-" + hook);
            assertThat(rules.get(1)).as(hook).contains("192.0.2.1").endsWith("-j ACCEPT");
        }
        assertThat(b.reconcile()).isZero();
    }

    @Test
    void aRefusedChainRestoreIsUndoneAndTheSetsPutBack() {
        IptablesBackend b = applied();
        String rules = save();
        String ipsets = sets();
        Batch fresh = new Batch(compiler.apply(new ClusterEvent.PolicyUpserted(policy("x", "new").select(match("app", "web"))
                .ingress(rule(peers(pods(match("app", "fresh"))), null)).build())).delta());
        refuseRulesWith = "x/new ingress[0]";

        assertThatThrownBy(() -> b.apply(fresh)).isInstanceOf(BackendException.class)
                .hasMessageContaining(variant().restore(Family.IPV4)).hasMessageContaining("npm-no-such-match");
        assertThat(save()).isEqualTo(rules);
        assertThat(sets()).as("the set the refused batch created is destroyed again").isEqualTo(ipsets);
        assertThat(metrics.iptablesRestoreFailures.labelValues("apply").get()).isEqualTo(1);

        refuseRulesWith = null;
        b.apply(fresh);
        assertThat(save()).contains("x/new ingress[0]");
        assertThat(b.reconcile()).isZero();
    }

    @Test
    void uninstallLeavesNothingBehind() {
        IptablesBackend b = applied();
        b.uninstall();

        assertThat(save()).doesNotContain("NPM-").doesNotContain("npm:");
        assertThat(sets()).doesNotContain("npm-");
        assertThat(b.status().rules()).isZero();
    }

    // ---- ClusterNetworkPolicy tiers -------------------------------------------------------------------

    /** What was last applied with tiers laid over the compiler's state (null: no tiers yet). */
    DesiredState tiered;

    /** Applies the difference between what the backend holds and the compiler's state with {@code overlay}. */
    void applyTiers(IptablesBackend b, TierOverlay overlay) {
        b.apply(tiersBatch(overlay));
    }

    Batch tiersBatch(TierOverlay overlay) {
        DesiredState next = overlay.over(compiler.snapshot());
        Batch batch = new Batch(StateDiff.between(tiered != null ? tiered : compiler.snapshot(), next));
        tiered = next;
        return batch;
    }

    static String podChain(String pod, Direction d) {
        return Names.chain(new ChainId.PodChain(PodKey.parse(pod), d, Family.IPV4));
    }

    static String cnpChain(String name, Direction d) {
        return Names.chain(new ChainId.ClusterPolicyChain(name, d, Family.IPV4));
    }

    /** The descriptions in the comments of a chain's rules in one family, in order; empty if there is no such chain. */
    /** The comments of a chain's rules, without the flow logging rules around each policy drop (those: {@code IptablesFlowRulesTest}). */
    List<String> comments(Family f, String chain) {
        Pattern rule = Pattern.compile("^-A " + Pattern.quote(chain) + " .*--comment \"?npm:[a-z2-7]{16} ?([^\"]*)\"?");
        List<String> out = new java.util.ArrayList<>();
        for (String l : must(List.of(variant().save(f), "-t", "filter"), "").lines().toList()) {
            Matcher m = rule.matcher(l);
            if (m.find() && !m.group(1).matches("(count|record|log first): .*")) {
                out.add(m.group(1));
            }
        }
        return out;
    }

    boolean chainExists(Family f, String chain) {
        return must(List.of(variant().save(f), "-t", "filter"), "").lines().anyMatch(l -> l.startsWith(":" + chain + " "));
    }

    @Test
    void tiersAreTriedInOrderAroundNetworkPolicy() {
        IptablesBackend b = applied();
        applyTiers(b, TierFixtures.overlay());

        assertThat(comments(Family.IPV4, podChain("x/web", Direction.INGRESS))).as("web: Admin, then its NetworkPolicy, final").containsExactly(
                "start", "admin adm-first", "accepted", "admin adm-second", "accepted", "end of admin tier",
                "policy x/web", "admitted", "drop: x/web isolated for ingress");
        assertThat(comments(Family.IPV4, podChain("x/api", Direction.INGRESS))).as("api: Admin, then Baseline, then allow").containsExactly(
                "start", "admin " + IptablesRules.describe(TierFixtures.EVIL), "accepted", "admin adm-second", "accepted", "end of admin tier",
                "baseline base", "baseline accept or pass: allowed");
        assertThat(comments(Family.IPV4, podChain("x/api", Direction.EGRESS))).as("api egress: NetworkPolicy isolates, Baseline never reached")
                .containsExactly("start", "policy x/api-egress", "admitted", "drop: x/api isolated for egress, not to its node");
        assertThat(comments(Family.IPV4, cnpChain("adm-first", Direction.INGRESS)))
                .containsExactly("cnp adm-first ingress[0] pass", "cnp adm-first ingress[1] deny");
        assertThat(comments(Family.IPV6, cnpChain("adm-first", Direction.INGRESS))).as("an IPv4 network matches nothing in IPv6")
                .containsExactly("cnp adm-first ingress[1] deny");
        assertThat(chainExists(Family.IPV4, cnpChain("base", Direction.EGRESS))).as("no pod reaches base's egress").isFalse();
        assertThat(save()).contains("-j MARK --set-xmark 0x0/0x60000", "-m mark --mark 0x0/0x40000 -j " + cnpChain("adm-second", Direction.INGRESS))
                .doesNotContain("$(", "\u2603", "delete table");
        assertThat(sets()).as("no pod reaches base's egress, nor its network's set").doesNotContain("198.51.100.0/24");
        assertThat(b.reconcile()).as("the kernel took it as written").isZero();
    }

    @Test
    void aPriorityEditRewritesOnlyPodChainsAndARuleEditOnlyThePolicysChain() {
        IptablesBackend b = applied();
        TierOverlay overlay = TierFixtures.overlay();
        applyTiers(b, overlay);
        String before = save();
        applyTiers(b, overlay.tiers(TierFixtures.WEB, new TierPolicies(List.of("adm-second", "adm-first"), List.of(), List.of("base"), List.of())));
        String reordered = save();
        assertThat(changedChains(before, reordered)).containsExactly(podChain("x/web", Direction.INGRESS));
        assertThat(comments(Family.IPV4, podChain("x/web", Direction.INGRESS))).startsWith("start", "admin adm-second", "accepted", "admin adm-first");

        applyTiers(b, overlay.policy("adm-second", List.of(TierOverlay.rule(0, io.npmagent.dataplane.tier.RuleAction.ACCEPT, List.of(),
                TierOverlay.tcp(23))), List.of()));
        assertThat(changedChains(reordered, save())).containsExactly(cnpChain("adm-second", Direction.INGRESS));
        assertThat(save()).contains("--dport 23").doesNotContain("--dport 22 ");
        assertThat(b.reconcile()).isZero();
    }

    @Test
    void aClusterPolicyNotHeldFailsClosedAtItsPlaceUntilItLands() {
        IptablesBackend b = applied();
        TierOverlay overlay = TierFixtures.overlay()
                .tiers(TierFixtures.WEB, new TierPolicies(List.of("adm-first", "late", "adm-second"), List.of(), List.of(), List.of()));
        Batch batch = tiersBatch(overlay.policy("late", List.of(TierOverlay.rule(0, io.npmagent.dataplane.tier.RuleAction.DENY,
                List.of(TierFixtures.cidr("203.0.113.0/24")), List.of())), List.of()));
        // Part by part, as the queue retries a refused batch: "late"'s own part is refused.
        refuseRulesWith = "cnp late ";
        for (Batch.Unit u : batch.units()) {
            try {
                b.apply(u.batch());
            } catch (BackendException e) {
                assertThat(u.key()).isEqualTo(new Batch.UnitKey.ClusterPolicy("late"));
            }
        }
        assertThat(comments(Family.IPV4, podChain("x/web", Direction.INGRESS))).as("what reaches late's place is dropped").containsExactly(
                "start", "admin adm-first", "accepted", "admin policy not held: fail closed", "end of admin tier",
                "policy x/web", "admitted", "drop: x/web isolated for ingress");
        assertThat(b.reconcile()).isZero();

        refuseRulesWith = null;
        b.apply(new Batch(StateDiff.between(overlay.remove("late").over(compiler.snapshot()), tiered)));
        assertThat(comments(Family.IPV4, podChain("x/web", Direction.INGRESS))).containsExactly(
                "start", "admin adm-first", "accepted", "admin late", "accepted", "admin adm-second", "accepted", "end of admin tier",
                "policy x/web", "admitted", "drop: x/web isolated for ingress");
        assertThat(b.reconcile()).isZero();
    }

    @Test
    void aRestartedAgentAdoptsTiersAndUninstallLeavesNothingOfThem() {
        IptablesBackend b = applied();
        applyTiers(b, TierFixtures.overlay());
        String rules = save();
        int calls = tap.calls().size();

        IptablesBackend restarted = backend();
        restarted.apply(new Batch(DesiredDelta.of(tiered)));
        onlyLoggedDropsRewritten(restoresSince(calls));
        assertThat(withoutRunNumbers(save())).isEqualTo(withoutRunNumbers(rules));
        assertThat(restarted.reconcile()).isZero();

        restarted.uninstall();
        assertThat(save()).doesNotContain("NPM-").doesNotContain("npm:");
        assertThat(sets()).doesNotContain("npm-");
    }

    /**
     * What a restart may write over a kernel that holds what it wants: only chains whose policy drops log
     * (their NFLOG prefixes carry attribution numbers, which are a run's own: the last run's decode to
     * nothing now), each whole, in one restore per family; no set, no other chain, nothing deleted.
     */
    static void onlyLoggedDropsRewritten(List<TapRunner.Call> restores) {
        assertThat(restores).as("at most one restore per family").hasSizeLessThanOrEqualTo(2)
                .allMatch(c -> c.argv().get(0).endsWith("tables-legacy-restore") || c.argv().get(0).endsWith("tables-nft-restore")
                        || c.argv().get(0).endsWith("tables-restore"));
        for (TapRunner.Call c : restores) {
            assertThat(c.stdin()).doesNotContain("-X ", "-D ");
            Set<String> chains = new TreeSet<>();
            c.stdin().lines().filter(l -> l.startsWith(":")).forEach(l -> chains.add(l.substring(1).split(" ")[0]));
            assertThat(chains).allMatch(n -> n.matches("NPM-(I|E|CI|CE)-[A-Z2-7]{16}"));
            for (String chain : chains) {
                assertThat(c.stdin()).as("%s logs a drop", chain).containsPattern("(?m)^-A " + chain + " .*--nflog-prefix \"?npm:D:");
            }
        }
    }

    /** A save with a run's own attribution numbers, and the rule hashes that cover them, blanked. */
    static String withoutRunNumbers(String save) {
        return save.replaceAll("npm:[a-z2-7]{16}", "npm:#").replaceAll("npm:([DA]):([IE]):[0-9]+", "npm:$1:$2:#");
    }

    /** Chains whose rules differ between two saves. */
    static Set<String> changedChains(String before, String after) {
        Set<String> b = new HashSet<>(before.lines().toList());
        Set<String> a = new HashSet<>(after.lines().toList());
        Set<String> chains = new TreeSet<>();
        for (String l : b) {
            if (!a.contains(l) && l.startsWith("-A ")) {
                chains.add(l.split(" ")[1]);
            }
        }
        for (String l : a) {
            if (!b.contains(l) && l.startsWith("-A ")) {
                chains.add(l.split(" ")[1]);
            }
        }
        return chains;
    }
}
