package io.npmagent.agent.flows;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.agent.config.FlowConfig;
import io.npmagent.dataplane.flow.FlowFilter;
import io.npmagent.dataplane.flow.FlowRecord;
import io.npmagent.dataplane.flow.FlowSettings;
import io.npmagent.dataplane.flow.ReplayedFlows;
import io.npmagent.dataplane.metrics.Metrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The agent's flow log over its backend's reports: pods named, the nearest rule found, counted, and a replaced backend's source replaced. */
class AgentFlowsTest {
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final Metrics metrics = new Metrics(registry);
    private final ClusterIndex index = new ClusterIndex();

    AgentFlowsTest() {
        FlowFixtures.cluster().forEach(index::take);
    }

    @Test
    void aDefaultDenyNamesItsPodsThePolicyAndTheNearestRule() {
        ReplayedFlows source = new ReplayedFlows();
        AgentFlows flows = new AgentFlows("n1", FlowConfig.DEFAULTS, index, metrics);
        flows.use("fake", source);
        source.report(FlowFixtures.deniedIngress(source.refs(), 3, 1));
        source.report(FlowFixtures.allowedEgress(source.refs(), 2));

        List<FlowRecord> all = flows.flows(FlowFilter.ALL);
        assertThat(all).as("allowed flows are off by default").hasSize(1);
        FlowRecord f = all.get(0);
        assertThat(f.node()).isEqualTo("n1");
        assertThat(f.backend()).isEqualTo("fake");
        assertThat(f.source().pod()).hasToString("x/a");
        assertThat(f.destination().pod()).hasToString("y/b");
        assertThat(f.attributionText()).contains("y/allow-web isolates it for ingress");
        assertThat(f.nearest()).isEqualTo("y/allow-web spec.ingress[0] admits the peer but not TCP/80 (its ports: TCP/8080)");
        assertThat(packets(registry, "denied", "")).as("a default deny: one series for the namespace").isEqualTo(3);
    }

    @Test
    void allowedFlowsWhenTheConfigurationAsksAndLossesInTheMetric() {
        ReplayedFlows source = new ReplayedFlows();
        FlowConfig both = new FlowConfig(true, true, 1000, 5, 15, 10_000, false);
        AgentFlows flows = new AgentFlows("n1", both, index, metrics);
        flows.use("fake", source);
        source.report(FlowFixtures.allowedEgress(source.refs(), 2));
        source.lose("rate");
        assertThat(flows.flows(FlowFilter.ALL)).singleElement().satisfies(f -> {
            assertThat(f.destination().pod()).as("the node's address").isNull();
            assertThat(f.nearest()).isNull();
        });
        CounterSnapshot lost = (CounterSnapshot) registry.scrape().stream().filter(m -> m.getMetadata().getName().equals("npm_flow_reports_lost"))
                .findFirst().orElseThrow();
        assertThat(lost.getDataPoints()).singleElement().satisfies(d -> assertThat(d.getValue()).isEqualTo(1.0));
    }

    @Test
    void aReplacedBackendsSourceIsClosedAndTheNewOneFeedsTheFollowers() {
        RecordingSource first = new RecordingSource();
        ReplayedFlows second = new ReplayedFlows();
        AgentFlows flows = new AgentFlows("n1", FlowConfig.DEFAULTS, index, metrics);
        List<FlowRecord> followed = new ArrayList<>();
        flows.follow(FlowFilter.ALL, followed::add);
        flows.use("bpf", first);
        assertThat(first.started).isEqualTo(FlowSettings.DEFAULT);
        first.report(FlowFixtures.deniedIngress(first.refs(), 1, 1));
        flows.use("nft", second);
        assertThat(first.closed).isTrue();
        first.report(FlowFixtures.deniedIngress(first.refs(), 2, 2)); // a late report of the old reader goes nowhere
        second.report(FlowFixtures.deniedIngress(second.refs(), 5, 3));
        assertThat(flows.backend()).isEqualTo("nft");
        assertThat(flows.flows(FlowFilter.ALL)).singleElement().satisfies(f -> {
            assertThat(f.backend()).isEqualTo("nft");
            assertThat(f.packets()).isEqualTo(5);
            assertThat(f.attribution()).as("decoded with the new backend's numbers").isNotNull();
        });
        assertThat(followed).extracting(FlowRecord::backend).containsExactly("bpf", "nft");
    }

    /** Flows off is said to the source too: a kernel a previous run told to report must be told to stop. */
    @Test
    void aSourceIsToldWhenNothingIsToBeReported() {
        RecordingSource source = new RecordingSource();
        new AgentFlows("n1", new FlowConfig(false, false, 1000, 5, 15, 10_000, false), index, metrics).use("bpf", source);
        assertThat(source.started).isNotNull().satisfies(s -> assertThat(s.any()).isFalse());
    }

    /** Flows.Denied turned off while the agent runs, then on: the source is told, the gauge follows, a later backend starts as now configured. */
    @Test
    void aConfigurationChangeReachesTheSourceAndTheGauge() {
        RecordingSource source = new RecordingSource();
        AgentFlows flows = new AgentFlows("n1", FlowConfig.DEFAULTS, index, metrics);
        flows.use("bpf", source);
        assertThat(reporting(registry, "denied")).isEqualTo(1);
        FlowSettings off = new FlowSettings(false, false, 1000, java.time.Duration.ofSeconds(5));
        flows.reconfigure(off);
        assertThat(source.reconfigured).containsExactly(off);
        assertThat(reporting(registry, "denied")).isZero();
        flows.reconfigure(off);
        assertThat(source.reconfigured).as("the same settings again: nothing to tell").containsExactly(off);
        RecordingSource next = new RecordingSource();
        flows.use("nft", next);
        assertThat(next.started).as("a backend switch starts with the settings in force").isEqualTo(off);
        flows.reconfigure(FlowSettings.DEFAULT);
        assertThat(next.reconfigured).containsExactly(FlowSettings.DEFAULT);
        assertThat(source.reconfigured).as("the closed source is not told").containsExactly(off);
        assertThat(reporting(registry, "denied")).isEqualTo(1);
    }

    static double reporting(PrometheusRegistry registry, String verdict) {
        return registry.scrape().stream().filter(m -> m.getMetadata().getName().equals("npm_flow_reporting"))
                .map(io.prometheus.metrics.model.snapshots.GaugeSnapshot.class::cast).flatMap(g -> g.getDataPoints().stream())
                .filter(d -> d.getLabels().get("verdict").equals(verdict)).mapToDouble(d -> d.getValue()).sum();
    }

    static double packets(PrometheusRegistry registry, String verdict, String policy) {
        return registry.scrape().stream().filter(m -> m.getMetadata().getName().equals("npm_flow_packets")).map(CounterSnapshot.class::cast)
                .flatMap(c -> c.getDataPoints().stream())
                .filter(d -> d.getLabels().get("verdict").equals(verdict) && d.getLabels().get("policy").equals(policy))
                .mapToDouble(CounterSnapshot.CounterDataPointSnapshot::getValue).sum();
    }

    /** A source that remembers how it was started and closed, and stops delivering once closed, as a kernel reader does. */
    static final class RecordingSource implements io.npmagent.dataplane.flow.FlowSource {
        private final io.npmagent.dataplane.flow.AttributionRefs refs = new io.npmagent.dataplane.flow.AttributionRefs();
        FlowSettings started;
        final List<FlowSettings> reconfigured = new ArrayList<>();
        boolean closed;
        private java.util.function.Consumer<io.npmagent.dataplane.flow.FlowReport> sink;

        @Override
        public io.npmagent.dataplane.flow.AttributionRefs refs() {
            return refs;
        }

        @Override
        public void start(FlowSettings settings, java.util.function.Consumer<io.npmagent.dataplane.flow.FlowReport> sink) {
            this.started = settings;
            this.sink = sink;
        }

        @Override
        public void reconfigure(FlowSettings settings) {
            reconfigured.add(settings);
        }

        void report(io.npmagent.dataplane.flow.FlowReport r) {
            if (!closed && sink != null) {
                sink.accept(r);
            }
        }

        @Override
        public java.util.Map<String, Long> lost() {
            return java.util.Map.of();
        }

        @Override
        public void close() {
            closed = true;
        }
    }
}
