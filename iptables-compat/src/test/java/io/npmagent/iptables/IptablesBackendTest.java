package io.npmagent.iptables;

import static io.npmagent.dataplane.model.PolicyFixtures.anyPortOf;
import static io.npmagent.dataplane.model.PolicyFixtures.block;
import static io.npmagent.dataplane.model.PolicyFixtures.labels;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static io.npmagent.dataplane.model.PolicyFixtures.named;
import static io.npmagent.dataplane.model.PolicyFixtures.namespaces;
import static io.npmagent.dataplane.model.PolicyFixtures.peers;
import static io.npmagent.dataplane.model.PolicyFixtures.pods;
import static io.npmagent.dataplane.model.PolicyFixtures.podsInNamespaces;
import static io.npmagent.dataplane.model.PolicyFixtures.policy;
import static io.npmagent.dataplane.model.PolicyFixtures.port;
import static io.npmagent.dataplane.model.PolicyFixtures.ports;
import static io.npmagent.dataplane.model.PolicyFixtures.range;
import static io.npmagent.dataplane.model.PolicyFixtures.rule;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.npmagent.iptables.detect.IptablesVariant;
import io.npmagent.dataplane.exec.CommandRunner;
import io.npmagent.iptables.model.Family;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@link IptablesBackendContract} over {@link FakeIptables}, without root; and, here only, the exact
 * processes the backend runs, in order, and the exact input it sends (golden files), with hostile names
 * and labels that must never reach a restore file.
 */
class IptablesBackendTest extends IptablesBackendContract {
    static final String HOSTILE_POD = "web\"\n-A FORWARD -j ACCEPT";
    static final String HOSTILE_VALUE = "$(reboot);`x`";
    static final String LONG_VALUE = "v".repeat(63);

    private static final List<String> IPSET_SAVE = List.of("ipset", "save");
    private static final List<String> SAVE4 = List.of("iptables-legacy-save", "-t", "filter");
    private static final List<String> SAVE6 = List.of("ip6tables-legacy-save", "-t", "filter");
    private static final List<String> IPSET_RESTORE = List.of("ipset", "restore");
    private static final List<String> RESTORE4 = List.of("iptables-legacy-restore", "--noflush", "-w", "10");
    private static final List<String> RESTORE6 = List.of("ip6tables-legacy-restore", "--noflush", "-w", "10");

    @Override
    protected IptablesVariant variant() {
        return IptablesVariant.LEGACY;
    }

    @Override
    protected CommandRunner openKernel() {
        return new FakeIptables(IptablesVariant.LEGACY);
    }

    @Override
    protected void closeKernel() {}

    /** One of each kind of rule, over hostile names and labels. */
    static ClusterState hostileCluster() {
        return ClusterState.EMPTY.applyAll(List.of(
                new ClusterEvent.NamespaceUpserted(new Namespace("x", labels("team", HOSTILE_VALUE))),
                new ClusterEvent.NamespaceUpserted(new Namespace("ünï", labels("team", LONG_VALUE))),
                new ClusterEvent.PodUpserted(Pod.builder("x", HOSTILE_POD).labels(labels("app", "web", "note", HOSTILE_VALUE))
                        .ip("10.0.0.1").ip("fd00::1").port("http", 8080, Protocol.TCP).port("dns", 53, Protocol.UDP).build()),
                new ClusterEvent.PodUpserted(Pod.builder("ünï", "api").labels(labels("app", LONG_VALUE))
                        .ip("10.0.0.2").build()),
                new ClusterEvent.PolicyUpserted(policy("x", "all-kinds;$(id)").select(match("app", "web"))
                        .ingress(
                                rule(peers(pods(match("app", "web")), namespaces(match("team", LONG_VALUE))), ports(named(null, "http"))),
                                rule(peers(podsInNamespaces(match("app", LONG_VALUE), match())), ports(range("TCP", 8000, 8100), port("SCTP", 80))),
                                rule(peers(block("192.168.0.0/16", "192.168.1.0/24", "192.168.2.0/24"), block("fd00::/64", "fd00::bad/128")),
                                        ports(anyPortOf("UDP"))),
                                rule(null, ports(port("UDP", 53))))
                        .egress(rule(peers(block("0.0.0.0/0", "10.0.0.0/8")), null), rule(null, ports(named("UDP", "dns"))))
                        .types("Ingress", "Egress").build()),
                new ClusterEvent.PolicyUpserted(policy("x", "deny-all").build())));
    }

    @Test
    void theFirstBatchReadsBackThenWritesSetsThenEachFamilysChains() {
        backend().apply(new Batch(DesiredDelta.of(PolicyCompiler.compile(hostileCluster(), null))));

        List<TapRunner.Call> calls = tap.calls();
        assertThat(calls.stream().map(TapRunner.Call::argv).toList())
                .containsExactly(IPSET_SAVE, SAVE4, SAVE6, IPSET_RESTORE, RESTORE4, RESTORE6);
        Golden.assertMatches("iptables/all-kinds.ipset", calls.get(3).stdin());
        Golden.assertMatches("iptables/all-kinds-v4.restore", calls.get(4).stdin());
        Golden.assertMatches("iptables/all-kinds-v6.restore", calls.get(5).stdin());
    }

    @Test
    void untrustedTextNeverReachesARestoreInput() {
        backend().apply(new Batch(DesiredDelta.of(PolicyCompiler.compile(hostileCluster(), null))));

        Pattern wellFormed = Pattern.compile("^(\\*filter|COMMIT|:NPM-[A-Z0-9-]+ - \\[0:0\\]|-A NPM-[A-Z0-9-]+ .*|-I (FORWARD|INPUT) 1 .*|"
                + "create npm-.*|add npm-.*)$");
        for (TapRunner.Call call : tap.calls()) {
            String in = call.stdin();
            assertThat(in).doesNotContain("reboot").doesNotContain("FORWARD -j ACCEPT").doesNotContain(LONG_VALUE)
                    .doesNotContain("ünï").doesNotContain("$(").doesNotContain(";");
            for (String line : in.lines().toList()) {
                assertThat(line).matches(wellFormed);
                assertThat(line.chars().filter(c -> c == '"').count()).as("quotes in %s", line).isIn(0L, 2L);
            }
        }
    }

    /** The tiers over the contract's cluster: sets, then each family's chains (pod chains and ClusterNetworkPolicy chains). */
    @Test
    void tiersAreWrittenAsGolden() {
        IptablesBackend b = applied();
        int from = tap.calls().size();
        applyTiers(b, TierFixtures.overlay());
        List<TapRunner.Call> written = restoresSince(from);
        assertThat(written).extracting(c -> c.argv().get(0)).containsExactly("ipset", variant().restore(Family.IPV4), variant().restore(Family.IPV6));
        Golden.assertMatches("iptables/tiers.ipset", written.get(0).stdin());
        Golden.assertMatches("iptables/tiers-v4.restore", written.get(1).stdin());
        Golden.assertMatches("iptables/tiers-v6.restore", written.get(2).stdin());
    }
}
