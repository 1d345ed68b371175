package io.npmagent.agent.flows;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.flow.Attribution;
import io.npmagent.dataplane.flow.DropReason;
import io.npmagent.dataplane.flow.FlowRecord;
import io.npmagent.dataplane.flow.FlowVerdict;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** NetworkPolicyDenied events: on the pod whose policy denied, once per pod, attribution, peer and port in 10 minutes, capped per node. */
class DeniedFlowEventsTest {
    private record Posted(PodKey pod, String reason, String message) {}

    private final List<Posted> posted = new ArrayList<>();
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private Instant now = FlowFixtures.T0;
    private final InstantSource clock = () -> now;
    private final DeniedFlowEvents events = new DeniedFlowEvents((pod, reason, message) -> posted.add(new Posted(pod, reason, message)), clock, 3,
            true, registry);

    private static FlowRecord flow(Direction direction, String from, String to, int port, FlowVerdict verdict) {
        Attribution a = new Attribution.Isolation(direction, List.of(new PolicyKey("y", "allow-web")));
        return new FlowRecord(FlowFixtures.T0, FlowFixtures.T0, "n1", "bpf", verdict, verdict == FlowVerdict.DENIED ? DropReason.POLICY : null,
                direction, "tc", "IPv4", "TCP", peer(from), peer(to), port, null, 1, 60, 1, a, "y/allow-web spec.ingress[0] admits the peer but not TCP/80");
    }

    private static FlowRecord.Peer peer(String text) {
        String[] p = text.split("@");
        return new FlowRecord.Peer(IpAddress.parse(p[1]), p[0].isEmpty() ? null : PodKey.parse(p[0]));
    }

    @Test
    void ingressGoesOnTheDestinationAndEgressOnTheSource() {
        events.accept(flow(Direction.INGRESS, "x/a@10.1.0.1", "y/b@10.2.0.2", 80, FlowVerdict.DENIED));
        events.accept(flow(Direction.EGRESS, "y/b@10.2.0.2", "@8.8.8.8", 53, FlowVerdict.DENIED));
        assertThat(posted).extracting(Posted::pod).containsExactly(new PodKey("y", "b"), new PodKey("y", "b"));
        assertThat(posted).extracting(Posted::reason).containsOnly("NetworkPolicyDenied");
        assertThat(posted.get(0).message()).isEqualTo("ingress TCP from x/a(10.1.0.1) to port 80 denied on node n1 (bpf): NetworkPolicy y/allow-web "
                + "isolates it for ingress, no rule admits it; nearest: y/allow-web spec.ingress[0] admits the peer but not TCP/80");
        assertThat(posted.get(1).message()).startsWith("egress TCP to 8.8.8.8 port 53 denied");
    }

    @Test
    void theSameDenialIsPostedOnceInTenMinutes() {
        FlowRecord f = flow(Direction.INGRESS, "x/a@10.1.0.1", "y/b@10.2.0.2", 80, FlowVerdict.DENIED);
        events.accept(f);
        now = now.plusSeconds(60);
        events.accept(f);
        events.accept(flow(Direction.INGRESS, "x/a@10.1.0.1", "y/b@10.2.0.2", 81, FlowVerdict.DENIED));
        assertThat(posted).as("another port is another denial").hasSize(2);
        now = now.plus(Duration.ofMinutes(10));
        events.accept(f);
        assertThat(posted).hasSize(3);
    }

    @Test
    void moreThanTheCapAMinuteAreCountedNotPosted() {
        for (int port = 1; port <= 5; port++) {
            events.accept(flow(Direction.INGRESS, "x/a@10.1.0.1", "y/b@10.2.0.2", port, FlowVerdict.DENIED));
        }
        assertThat(posted).hasSize(3);
        assertThat(skipped()).isEqualTo(2);
        now = now.plusSeconds(61);
        events.accept(flow(Direction.INGRESS, "x/a@10.1.0.1", "y/b@10.2.0.2", 4, FlowVerdict.DENIED));
        assertThat(posted).as("a minute later").hasSize(4);
    }

    @Test
    void allowedFlowsUnknownPodsAndASwitchedOffAgentPostNothing() {
        events.accept(flow(Direction.INGRESS, "x/a@10.1.0.1", "y/b@10.2.0.2", 80, FlowVerdict.ALLOWED));
        events.accept(flow(Direction.INGRESS, "x/a@10.1.0.1", "@10.2.0.9", 80, FlowVerdict.DENIED));
        events.enable(false);
        events.accept(flow(Direction.INGRESS, "x/a@10.1.0.1", "y/b@10.2.0.2", 80, FlowVerdict.DENIED));
        assertThat(posted).isEmpty();
        events.enable(true);
        events.accept(flow(Direction.INGRESS, "x/a@10.1.0.1", "y/b@10.2.0.2", 80, FlowVerdict.DENIED));
        assertThat(posted).hasSize(1);
    }

    /** Following the agent's log, only while on: a flow of the kernel's becomes an Event then, nearest rule and all. */
    @Test
    void followsTheAgentsFlowsOnlyWhileOn() {
        ClusterIndex index = new ClusterIndex();
        FlowFixtures.cluster().forEach(index::take);
        io.npmagent.dataplane.flow.ReplayedFlows source = new io.npmagent.dataplane.flow.ReplayedFlows();
        AgentFlows flows = new AgentFlows("n1", io.npmagent.agent.config.FlowConfig.DEFAULTS, index,
                new io.npmagent.dataplane.metrics.Metrics(new PrometheusRegistry()));
        flows.use("fake", source);
        events.enable(false);
        events.followWhileEnabled(flows);
        source.report(FlowFixtures.deniedIngress(source.refs(), 1, 1));
        assertThat(flows.flows(io.npmagent.dataplane.flow.FlowFilter.ALL)).as("recorded all the same").hasSize(1);
        events.enable(true);
        source.report(FlowFixtures.deniedIngress(source.refs(), 1, 2));
        assertThat(posted).singleElement().satisfies(p -> assertThat(p.message()).contains("nearest: y/allow-web spec.ingress[0]"));
        events.enable(false);
        now = now.plus(Duration.ofMinutes(11));
        source.report(FlowFixtures.deniedIngress(source.refs(), 1, 3));
        assertThat(posted).as("off again").hasSize(1);
    }

    private double skipped() {
        return registry.scrape().stream().filter(m -> m.getMetadata().getName().equals("npm_flow_events_skipped")).map(CounterSnapshot.class::cast)
                .flatMap(c -> c.getDataPoints().stream()).mapToDouble(CounterSnapshot.CounterDataPointSnapshot::getValue).sum();
    }
}
