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

import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.npmagent.iptables.IptablesBackend;
import io.npmagent.iptables.detect.IptablesVariant;
import io.npmagent.iptables.model.Family;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
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
}
