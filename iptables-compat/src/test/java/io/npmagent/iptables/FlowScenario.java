package io.npmagent.iptables;

import static io.npmagent.dataplane.model.PolicyFixtures.labels;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static io.npmagent.dataplane.model.PolicyFixtures.peers;
import static io.npmagent.dataplane.model.PolicyFixtures.pods;
import static io.npmagent.dataplane.model.PolicyFixtures.policy;
import static io.npmagent.dataplane.model.PolicyFixtures.port;
import static io.npmagent.dataplane.model.PolicyFixtures.ports;
import static io.npmagent.dataplane.model.PolicyFixtures.rule;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.desired.DesiredState;
import io.npmagent.dataplane.desired.StateDiff;
import io.npmagent.dataplane.eval.ClusterRuleRef;
import io.npmagent.dataplane.flow.Attribution;
import io.npmagent.dataplane.flow.DropReason;
import io.npmagent.dataplane.flow.FlowFilter;
import io.npmagent.dataplane.flow.FlowLog;
import io.npmagent.dataplane.flow.FlowRecord;
import io.npmagent.dataplane.flow.FlowReport;
import io.npmagent.dataplane.flow.FlowSettings;
import io.npmagent.dataplane.flow.FlowVerdict;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.model.Tier;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.npmagent.dataplane.tier.RuleAction;
import io.npmagent.harness.node.PodNetwork;
import io.npmagent.iptables.flow.NetfilterFlows;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Flow verdicts with real packets through a netfilter backend (nft, iptables-nft, iptables-legacy): pods
 * a, b, c in namespace x, the reader bound inside the test's node namespace, every report kept and
 * merged into a {@link FlowLog}. Each scenario is one test of {@code NftFlowKernelTest} and
 * {@code IptablesFlowKernelTest}.
 */
public final class FlowScenario implements AutoCloseable {
    private final PodNetwork net;
    private final NetfilterBackend backend;
    private final NetfilterFlows flows;
    private final PolicyCompiler compiler = new PolicyCompiler(null);
    private final TierOverlay overlay = new TierOverlay();
    private final List<FlowReport> reports = new CopyOnWriteArrayList<>();
    private final FlowLog log;
    private DesiredState applied = DesiredState.EMPTY;

    public FlowScenario(PodNetwork net, NetfilterBackend backend, FlowSettings settings) {
        this.net = net;
        this.backend = backend;
        Map<IpAddress, PodKey> owners = new HashMap<>();
        compiler.apply(new ClusterEvent.NamespaceUpserted(new Namespace("x", labels())));
        for (String name : new String[] {"a", "b", "c"}) {
            owners.put(net.address(name, false), new PodKey("x", name));
            owners.put(net.address(name, true), new PodKey("x", name));
            compiler.apply(new ClusterEvent.PodUpserted(Pod.builder("x", name).labels(labels("app", name))
                    .ip(net.address(name, false)).ip(net.address(name, true)).port("probe", PodNetwork.PORT, Protocol.TCP).build()));
        }
        this.log = new FlowLog("node", backend.name(), backend.flows().refs(), owners::get, FlowLog.NearMiss.NONE, FlowLog.Counter.NONE,
                Duration.ofMinutes(5), 100_000);
        sync();
        this.flows = backend.flows().inNamespace(net.node().name());
        flows.start(settings, r -> {
            reports.add(r);
            log.record(r);
        });
    }

    @Override
    public void close() {
        flows.close();
    }

    private void sync() {
        DesiredState next = overlay.over(compiler.snapshot());
        backend.apply(new Batch(StateDiff.between(applied, next)));
        applied = next;
    }

    /** (a) Two NetworkPolicies isolate b for ingress, neither admits a: a's connection is reported within a second, naming both. */
    public void aDefaultDenyIsReportedWithEveryIsolatingPolicy() {
        compiler.apply(new ClusterEvent.PolicyUpserted(policy("x", "deny-all").select(match("app", "b")).ingress().build()));
        compiler.apply(new ClusterEvent.PolicyUpserted(policy("x", "c-to-b").select(match("app", "b"))
                .ingress(rule(peers(pods(match("app", "c"))), ports(port("TCP", PodNetwork.PORT)))).build()));
        sync();

        long start = System.nanoTime();
        Thread connect = attempt("a", "b");
        FlowReport first = awaitReport(r -> r.source().equals(net.address("a", false)), Duration.ofSeconds(1));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("reported within a second").isLessThan(Duration.ofSeconds(1));
        join(connect);
        assertThat(first.verdict()).isEqualTo(FlowVerdict.DENIED);
        assertThat(first.reason()).isEqualTo(DropReason.POLICY);
        assertThat(first.reporter()).isEqualTo("nflog");
        assertThat(first.direction()).isEqualTo(Direction.INGRESS);
        assertThat(first.destination()).isEqualTo(net.address("b", false));
        assertThat(first.protocol()).isEqualTo(6);
        assertThat(first.port()).isEqualTo(PodNetwork.PORT);
        assertThat(backend.flows().refs().resolve(first.ref())).contains(
                new Attribution.Isolation(Direction.INGRESS, List.of(new PolicyKey("x", "c-to-b"), new PolicyKey("x", "deny-all"))));

        FlowRecord flow = only(FlowFilter.ALL);
        assertThat(flow.source().pod()).isEqualTo(new PodKey("x", "a"));
        assertThat(flow.destination().pod()).isEqualTo(new PodKey("x", "b"));
        assertThat(flow.attributionText()).contains("x/c-to-b", "x/deny-all", "ingress");
        assertThat(net.pod("c").run("timeout", "2", "bash", "-c", "</dev/tcp/" + net.address("b", false) + "/" + PodNetwork.PORT).exitCode())
                .as("c, admitted, still connects").isZero();
    }

    /** (b) An Admin Deny of a's egress to c: its tier, policy and rule, named. */
    public void aClusterPolicyDenyIsReportedWithItsRule() {
        overlay.policy("no-c", List.of(), List.of(TierOverlay.rule(0, RuleAction.ACCEPT, TierOverlay.hosts(net.address("b", false)), List.of()),
                        TierOverlay.rule(1, RuleAction.DENY, TierOverlay.hosts(net.address("c", false), net.address("c", true)), List.of())))
                .tiers(new PodKey("x", "a"), TierOverlay.on(Direction.EGRESS, List.of("no-c"), List.of()));
        sync();

        Thread connect = attempt("a", "c");
        FlowReport first = awaitReport(r -> r.destination().equals(net.address("c", false)), Duration.ofSeconds(1));
        join(connect);
        assertThat(first.direction()).isEqualTo(Direction.EGRESS);
        assertThat(backend.flows().refs().resolve(first.ref())).contains(new Attribution.ByClusterRule(
                new ClusterRuleRef(Tier.ADMIN, "no-c", Direction.EGRESS, 1, "r1"), RuleAction.DENY));
        assertThat(only(FlowFilter.ALL).attributionText()).isEqualTo("Admin cnp/no-c egress[1] \"r1\" Deny");
    }

    /** (c) 1,000 datagrams of one flow, each from a new source port: one flow, logged once, counted 1,000 times. */
    public void retriesFromNewSourcePortsAreOneCountedFlow() {
        compiler.apply(new ClusterEvent.PolicyUpserted(policy("x", "deny-all").select(match("app", "b")).ingress().build()));
        sync();

        datagrams("a", net.address("b", false), PodNetwork.PORT, 1, 1000);
        awaitReport(r -> r.protocol() == 17, Duration.ofSeconds(2));
        flows.readCountersNow(this::record);
        FlowRecord flow = only(FlowFilter.ALL);
        assertThat(flow.protocol()).isEqualTo("UDP");
        assertThat(flow.port()).isEqualTo(PodNetwork.PORT);
        assertThat(flow.packets()).as("every datagram counted").isEqualTo(1000);
        assertThat(reports.stream().filter(r -> r.packets() == 1)).as("only the first packet is logged").hasSize(1);
        assertThat(flows.lost()).containsEntry("rate", 0L).containsEntry("buffer", 0L);
    }

    /** (d) A burst of 200 new flows against a limit of 10 a second: at most the limit and its burst are logged, every flow counted. */
    public void aBurstBeyondTheRateIsCountedNotLogged(int rate) {
        compiler.apply(new ClusterEvent.PolicyUpserted(policy("x", "deny-all").select(match("app", "b")).ingress().build()));
        sync();

        datagrams("a", net.address("b", false), 20000, 200, 1);
        try {
            Thread.sleep(500); // what was logged has arrived
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        long logged = flows.logged();
        assertThat(logged).as("logged: at most the rate and its burst (and what refilled during the burst)")
                .isPositive().isLessThanOrEqualTo(2L * rate + 5);
        flows.readCountersNow(this::record);
        assertThat(log.flows(FlowFilter.ALL)).as("every flow counted").hasSize(200)
                .allSatisfy(f -> assertThat(f.packets()).isEqualTo(1));
        assertThat(flows.lost().get("rate")).as("the flows whose log the limit dropped").isEqualTo(200 - logged);
    }

    private void record(FlowReport r) {
        reports.add(r);
        log.record(r);
    }

    private FlowRecord only(FlowFilter filter) {
        List<FlowRecord> all = log.flows(filter);
        assertThat(all).as("flows").hasSize(1);
        return all.get(0);
    }

    /** A TCP connect from one pod to another's IPv4 address, in the background (it times out when dropped). */
    private Thread attempt(String from, String to) {
        Thread t = new Thread(() -> net.pod(from).run("timeout", "2", "bash", "-c", "</dev/tcp/" + net.address(to, false) + "/" + PodNetwork.PORT));
        t.start();
        return t;
    }

    /** UDP datagrams from pod {@code from}, each from a socket of its own (a new source port): to {@code ports} ports from {@code port}, {@code each} to each. */
    private void datagrams(String from, IpAddress to, int port, int ports, int each) {
        String py = "import socket\n"
                + "for p in range(" + port + ", " + (port + ports) + "):\n"
                + "    for i in range(" + each + "):\n"
                + "        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                + "        s.sendto(b'x', ('" + to + "', p))\n"
                + "        s.close()\n";
        assertThat(net.pod(from).run("python3", "-c", py).exitCode()).isZero();
    }

    private FlowReport awaitReport(java.util.function.Predicate<FlowReport> which, Duration within) {
        long deadline = System.nanoTime() + within.toNanos();
        while (System.nanoTime() < deadline) {
            for (FlowReport r : reports) {
                if (which.test(r)) {
                    return r;
                }
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        throw new AssertionError("no flow report within " + within + "; reports: " + reports + "; lost: " + flows.lost());
    }

    private static void join(Thread t) {
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
