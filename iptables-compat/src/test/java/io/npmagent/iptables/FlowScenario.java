package io.npmagent.iptables;

import static io.npmagent.dataplane.model.PolicyFixtures.labels;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static io.npmagent.dataplane.model.PolicyFixtures.policy;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.desired.DesiredState;
import io.npmagent.dataplane.desired.StateDiff;
import io.npmagent.dataplane.flow.FlowFilter;
import io.npmagent.dataplane.flow.FlowLog;
import io.npmagent.dataplane.flow.FlowRecord;
import io.npmagent.dataplane.flow.FlowReport;
import io.npmagent.dataplane.flow.FlowSettings;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.policy.PolicyCompiler;
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
 * merged into a {@link FlowLog}: what only the netfilter backends need beyond the stories every backend is
 * told ({@code PacketScenarios#flowVerdictsNameWhatDecided}, {@code #flowReportsStayWithinTheirRate}).
 */
public final class FlowScenario implements AutoCloseable {
    private final PodNetwork net;
    private final NetfilterBackend backend;
    private final NetfilterFlows flows;
    private final PolicyCompiler compiler = new PolicyCompiler(null);
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
        DesiredState next = compiler.snapshot();
        backend.apply(new Batch(StateDiff.between(applied, next)));
        applied = next;
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

    private void record(FlowReport r) {
        reports.add(r);
        log.record(r);
    }

    private FlowRecord only(FlowFilter filter) {
        List<FlowRecord> all = log.flows(filter);
        assertThat(all).as("flows").hasSize(1);
        return all.get(0);
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
}
