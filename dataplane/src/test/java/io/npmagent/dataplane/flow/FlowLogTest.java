package io.npmagent.dataplane.flow;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.eval.ClusterRuleRef;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Tier;
import io.npmagent.dataplane.tier.RuleAction;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FlowLogTest {
    private static final IpAddress CLIENT = IpAddress.parse("10.244.0.5");
    private static final IpAddress SERVER = IpAddress.parse("10.244.0.6");
    private static final Map<IpAddress, PodKey> PODS = Map.of(CLIENT, new PodKey("x", "a"), SERVER, new PodKey("y", "b"));
    private static final Instant T0 = Instant.parse("2026-12-07T00:00:00Z");

    private final AttributionRefs refs = new AttributionRefs();
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final Metrics metrics = new Metrics(registry);
    private final FlowLog log = new FlowLog("node-1", "bpf", refs, PODS::get, (r, iso) -> "y/allow-web spec.ingress[0] (port 8080, not 80)",
            metrics::countFlow, Duration.ofMinutes(5), 1000);

    private static FlowReport denied(long instance, long packets, int ref, long secondsAfter) {
        return new FlowReport(T0, T0.plusSeconds(secondsAfter), FlowVerdict.DENIED, DropReason.POLICY, Direction.INGRESS, "tc", CLIENT, SERVER, 6, 80,
                null, 0, packets, packets * 60, instance, ref);
    }

    @Test
    void aThousandRetriesOfOneFlowAreOneFlowWithTheirCount() {
        int ref = refs.ref(new Attribution.Isolation(Direction.INGRESS, List.of(new PolicyKey("y", "deny-all"), new PolicyKey("y", "allow-web"))));
        log.record(denied(7, 1, ref, 0));
        log.record(denied(7, 600, ref, 5));
        log.record(denied(7, 1000, ref, 9));

        List<FlowRecord> flows = log.flows(FlowFilter.ALL);
        assertThat(flows).hasSize(1);
        FlowRecord f = flows.get(0);
        assertThat(f.packets()).isEqualTo(1000);
        assertThat(f.bytes()).isEqualTo(60_000);
        assertThat(f.reports()).isEqualTo(3);
        assertThat(f.first()).isEqualTo(T0);
        assertThat(f.last()).isEqualTo(T0.plusSeconds(9));
        assertThat(f.source().pod()).isEqualTo(new PodKey("x", "a"));
        assertThat(f.destination().pod()).isEqualTo(new PodKey("y", "b"));
        assertThat(f.port()).isEqualTo(80);
        assertThat(f.protocol()).isEqualTo("TCP");
        assertThat(f.attribution()).isEqualTo(new Attribution.Isolation(Direction.INGRESS,
                List.of(new PolicyKey("y", "allow-web"), new PolicyKey("y", "deny-all"))));
        assertThat(f.nearest()).contains("allow-web");
        assertThat(f.line()).contains("DENIED(policy) ingress TCP x/a(10.244.0.5) -> y/b(10.244.0.6):80 packets=1000")
                .contains("y/allow-web, y/deny-all isolate it for ingress");
        assertThat(counter("npm_flow_packets_total", "")).as("a default deny: one series for the namespace").isEqualTo(1000);
        assertThat(counter("npm_flows_total", "")).isEqualTo(1);
        assertThat(counter("npm_flows_total", "deny-all")).isZero();
    }

    @Test
    void aKernelRecordMadeAnewCountsOnFromTheOldOnesTotal() {
        log.record(denied(1, 10, 0, 0));
        log.record(denied(2, 3, 0, 60));
        log.record(denied(2, 5, 0, 61));
        log.record(denied(2, 4, 0, 62)); // a late summary: never counts back

        FlowRecord f = log.flows(FlowFilter.ALL).get(0);
        assertThat(f.packets()).isEqualTo(15);
        assertThat(f.attribution()).isNull();
        assertThat(f.attributionText()).startsWith("unknown");
    }

    @Test
    void attributionIsWhatTheReferenceMeantWhenWrittenWhateverComesLater() {
        ClusterRuleRef rule = new ClusterRuleRef(Tier.ADMIN, "no-metadata", Direction.EGRESS, 1, "block");
        int ref = refs.ref(new Attribution.ByClusterRule(rule, RuleAction.DENY));
        int edited = refs.ref(new Attribution.ByClusterRule(new ClusterRuleRef(Tier.ADMIN, "no-metadata", Direction.EGRESS, 0, "block"),
                RuleAction.DENY));
        assertThat(edited).isNotEqualTo(ref);
        assertThat(refs.ref(new Attribution.ByClusterRule(rule, RuleAction.DENY))).isEqualTo(ref);

        log.record(denied(1, 1, ref, 0));
        assertThat(log.flows(FlowFilter.ALL).get(0).attributionText()).isEqualTo("Admin cnp/no-metadata egress[1] \"block\" Deny");
        assertThat(log.flows(new FlowFilter(null, null, null, "no-metadata", null))).hasSize(1);
        assertThat(log.flows(new FlowFilter(null, null, null, "other", null))).isEmpty();
    }

    @Test
    void filtersAndFollowersSeeOnlyWhatTheyAskFor() {
        List<FlowRecord> followed = new ArrayList<>();
        try (AutoCloseable f = log.follow(new FlowFilter(null, new PodKey("y", "b"), null, null, null), followed::add)) {
            log.record(denied(1, 1, 0, 0));
            log.record(new FlowReport(T0, T0, FlowVerdict.ALLOWED, null, Direction.EGRESS, "tc", SERVER, IpAddress.parse("10.0.0.1"), 17, 53,
                    IpAddress.parse("10.96.0.10"), 53, 1, 80, 1, 0));
            log.record(new FlowReport(T0, T0, FlowVerdict.ALLOWED, null, Direction.EGRESS, "tc", IpAddress.parse("10.9.9.9"),
                    IpAddress.parse("10.0.0.1"), 17, 53, null, 0, 1, 80, 1, 0));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        assertThat(followed).hasSize(2);
        assertThat(followed.get(1).service()).hasToString("10.96.0.10:53");
        assertThat(log.flows(new FlowFilter(FlowVerdict.DENIED, null, null, null, null))).hasSize(1);
        assertThat(log.flows(new FlowFilter(null, null, "x", null, null))).hasSize(1);
        assertThat(log.flows(new FlowFilter(null, null, null, null, T0.plusSeconds(1)))).isEmpty();
        assertThat(log.flows(FlowFilter.ALL)).hasSize(3);
    }

    private double counter(String name, String policy) {
        return registry.scrape().stream().filter(s -> s.getMetadata().getPrometheusName().equals(name.replace("_total", "")))
                .flatMap(s -> ((CounterSnapshot) s).getDataPoints().stream())
                .filter(d -> policy.equals(d.getLabels().get("policy")))
                .mapToDouble(CounterSnapshot.CounterDataPointSnapshot::getValue).sum();
    }
}
