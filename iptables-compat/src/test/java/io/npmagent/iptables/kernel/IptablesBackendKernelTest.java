package io.npmagent.iptables.kernel;

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

import io.npmagent.dataplane.kernel.Netns;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.npmagent.iptables.IptablesBackend;
import io.npmagent.iptables.detect.IptablesVariant;
import io.npmagent.iptables.model.Family;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.HashSet;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The iptables backend against the real kernel, in a namespace of its own, for both variants: apply,
 * read back, apply again, edit, delete, restart and adopt, drift, uninstall.
 */
class IptablesBackendKernelTest {
    private Netns ns;
    private PolicyCompiler compiler;

    @BeforeEach
    void namespace() {
        KernelTestSupport.require("ipset", "iptables-nft-restore", "iptables-legacy-restore");
        ns = Netns.create("ipt");
        compiler = new PolicyCompiler(null);
    }

    @AfterEach
    void remove() {
        if (ns != null) {
            ns.close();
        }
    }

    private IptablesBackend backend(IptablesVariant variant) {
        return new IptablesBackend(variant, ns.runner(), new Metrics(new PrometheusRegistry()), IptablesBackend.Settings.DEFAULTS);
    }

    /** Both families' filter tables, without the save tools' dated comment lines. */
    private String save(IptablesVariant v) {
        String text = ns.must(v.save(Family.IPV4), "-t", "filter").stdout() + ns.must(v.save(Family.IPV6), "-t", "filter").stdout();
        return String.join("\n", text.lines().filter(l -> !l.startsWith("#")).toList());
    }

    private String sets() {
        return ns.must("ipset", "save").stdout();
    }

    private ClusterEvent[] cluster() {
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

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void appliesReadsBackAndIsIdempotent(IptablesVariant variant) {
        IptablesBackend b = backend(variant);
        for (ClusterEvent e : cluster()) {
            b.apply(new Batch(compiler.apply(e).delta()));
        }
        String rules = save(variant);
        assertThat(rules).contains("-A FORWARD -m comment --comment \"npm:forward npm-agent NetworkPolicy\" -j NPM-FORWARD");
        assertThat(rules).contains("--match-set npm-n4-").contains("--match-set npm-n6-").contains("-j DROP");
        assertThat(sets()).contains("192.168.1.0/24 nomatch").contains("add npm-c6-").contains("0.0.0.0/1").contains("10.0.0.1,tcp:8080");

        assertThat(b.reconcile()).as("nothing drifted").isZero();
        assertThat(save(variant)).isEqualTo(rules);
    }

    private IptablesBackend applied(IptablesVariant variant) {
        IptablesBackend b = backend(variant);
        for (ClusterEvent e : cluster()) {
            b.apply(new Batch(compiler.apply(e).delta()));
        }
        return b;
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void anEditRewritesOnlyThePolicysChain(IptablesVariant variant) {
        IptablesBackend b = applied(variant);
        String before = save(variant);
        String webChain = before.lines().filter(l -> l.contains("x/web ingress[0]")).findFirst().orElseThrow().split(" ")[1];

        b.apply(new Batch(compiler.apply(new ClusterEvent.PolicyUpserted(policy("x", "web").select(match("app", "web"))
                .ingress(rule(peers(pods(match("app", "api"))), ports(port("TCP", 9090)))).build())).delta()));

        String after = save(variant);
        assertThat(changedChains(before, after)).containsExactly(webChain);
        assertThat(after).contains("--dport 9090").doesNotContain("192.168.0.0");
        assertThat(sets()).as("the ipBlock's set went with its last rule").doesNotContain("192.168.1.0/24");
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void deletingPoliciesAndPodsRemovesTheirChainsAndSets(IptablesVariant variant) {
        IptablesBackend b = applied(variant);
        b.apply(new Batch(compiler.apply(new ClusterEvent.PolicyDeleted(new PolicyKey("x", "web"))).delta()));
        b.apply(new Batch(compiler.apply(new ClusterEvent.PodDeleted(PodKey.parse("x/api"))).delta()));

        String rules = save(variant);
        assertThat(rules).doesNotContain("NPM-PI-").doesNotContain("NPM-I-").doesNotContain("NPM-E-");
        assertThat(rules).contains("NPM-PE-").as("x/api-egress still exists, selecting nothing");
        assertThat(sets()).doesNotContain("npm-s4-").doesNotContain("npm-n4-").contains("npm-c4-");
        assertThat(b.reconcile()).isZero();
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void aRestartedAgentAdoptsWhatItFindsWithoutFlushing(IptablesVariant variant) {
        applied(variant);
        String rules = save(variant);
        String ipsets = sets();

        // A new agent: its first batch is the whole desired state, which the kernel already holds.
        IptablesBackend restarted = backend(variant);
        restarted.apply(new Batch(everything()));

        assertThat(save(variant)).isEqualTo(rules);
        assertThat(sets()).isEqualTo(ipsets);
        assertThat(restarted.reconcile()).isZero();
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void aRestartedAgentRemovesWhatTheDesiredStateNoLongerHas(IptablesVariant variant) {
        applied(variant);
        compiler.apply(new ClusterEvent.PolicyDeleted(new PolicyKey("x", "web")));
        IptablesBackend restarted = backend(variant);
        restarted.apply(new Batch(everything()));

        assertThat(save(variant)).doesNotContain("NPM-PI-").contains("NPM-PE-");
        assertThat(sets()).doesNotContain("npm-n4-");
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void driftIsRepairedByReconcile(IptablesVariant variant) {
        IptablesBackend b = applied(variant);
        String rules = save(variant);
        String dropRule = rules.lines().filter(l -> l.contains("-j DROP")).findFirst().orElseThrow();
        ns.must(variant.save(Family.IPV4).replace("-save", ""), "-D", dropRule.split(" ")[1], "3");
        ns.must("ipset", "del", sets().lines().filter(l -> l.contains(",tcp:8080")).findFirst().orElseThrow().split(" ")[1],
                "10.0.0.1,tcp:8080");
        ns.must(variant.save(Family.IPV4).replace("-save", ""), "-D", "FORWARD", "1");
        assertThat(save(variant)).isNotEqualTo(rules);

        assertThat(b.reconcile()).isGreaterThanOrEqualTo(3);

        assertThat(save(variant)).isEqualTo(rules);
        assertThat(sets()).contains("10.0.0.1,tcp:8080");
        assertThat(b.reconcile()).isZero();
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void uninstallLeavesNothingBehind(IptablesVariant variant) {
        IptablesBackend b = applied(variant);
        b.uninstall();

        assertThat(save(variant)).doesNotContain("NPM-").doesNotContain("npm:");
        assertThat(sets()).doesNotContain("npm-");
    }

    @ParameterizedTest
    @EnumSource(IptablesVariant.class)
    void restoreLatenciesAndKernelCountsAreExportedInSeconds(IptablesVariant variant) throws Exception {
        PrometheusRegistry registry = new PrometheusRegistry();
        Metrics metrics = new Metrics(registry);
        IptablesBackend b = new IptablesBackend(variant, ns.runner(), metrics, IptablesBackend.Settings.DEFAULTS);
        for (ClusterEvent e : cluster()) {
            b.apply(new Batch(compiler.apply(e).delta()));
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter.create().write(out, registry.scrape());
        String text = out.toString(java.nio.charset.StandardCharsets.UTF_8);

        double restores = metrics.iptablesRestoreLatency.labelValues("apply").getCount();
        double seconds = metrics.iptablesRestoreLatency.labelValues("apply").getSum();
        assertThat(restores).isGreaterThanOrEqualTo(4);
        assertThat(seconds / restores).as("a restore in a tiny namespace takes milliseconds, i.e. well under a second")
                .isGreaterThan(0).isLessThan(0.5);
        assertThat(text).contains("npm_linux_iptables_restore_latency_seconds_bucket{operation=\"apply\",le=\"0.001\"}")
                .contains("npm_linux_iptables_restore_latency_seconds_bucket{operation=\"apply\",le=\"120.0\"}")
                .contains("npm_ipset_restore_latency_seconds_count ")
                .contains("npm_num_iptables_rules ").contains("npm_num_ipsets ").contains("npm_num_ipset_entries ");
        assertThat(metrics.numIpsets.get()).isEqualTo(b.status().sets()).isGreaterThan(5);
        assertThat(metrics.numIptablesRules.get()).isEqualTo(b.status().rules()).isGreaterThan(20);
    }

    /** The compiler's whole state as one batch: what a restarted agent's first batch holds. */
    private DesiredDelta everything() {
        return DesiredDelta.of(compiler.snapshot());
    }

    /** Chains whose rules differ between two saves. */
    private static Set<String> changedChains(String before, String after) {
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
