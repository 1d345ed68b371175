package io.npmagent.agent.flows;

import io.npmagent.agent.config.FlowConfig;
import io.npmagent.dataplane.eval.NearestRule;
import io.npmagent.dataplane.flow.FlowFilter;
import io.npmagent.dataplane.flow.FlowLog;
import io.npmagent.dataplane.flow.FlowRecord;
import io.npmagent.dataplane.flow.FlowSettings;
import io.npmagent.dataplane.flow.FlowSource;
import io.npmagent.dataplane.metrics.Metrics;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The agent's flow verdicts: a {@link FlowLog} fed by the backend's {@link FlowSource}, naming pods by the
 * {@link ClusterIndex} and finding a default deny's nearest rule ({@link NearestRule}), counted into the
 * metrics. Readers list ({@link #flows}) and follow ({@link #follow}) here, not on the log, because the log
 * belongs to a backend: when the agent's backend is replaced ({@link #use}), the old source is closed and a
 * new log decodes the new backend's attribution numbers (the old numbers mean nothing to it), while
 * followers carry on. The old backend's flows go with its log.
 *
 * <p>Thread-safe: {@link #use} from the agent's thread, reports on the source's, readers on theirs.
 */
public final class AgentFlows implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(AgentFlows.class.getName());

    private final String node;
    private final FlowConfig config;
    private final ClusterIndex cluster;
    private final Metrics metrics;
    private final NearestRule nearest;
    /** Followers, each registered on the current log (and moved to the next one at a backend switch). */
    private final List<Follower> followers = new CopyOnWriteArrayList<>();
    private volatile FlowLog log;
    private volatile String backend = "";
    private FlowSource source = FlowSource.NONE;
    /** What the kernel is asked to report: the configuration's at start, then as {@link #reconfigure} says. */
    private FlowSettings settings;

    public AgentFlows(String node, FlowConfig config, ClusterIndex cluster, Metrics metrics) {
        this.node = node == null ? "" : node;
        this.config = config;
        this.cluster = cluster;
        this.metrics = metrics;
        this.nearest = new NearestRule(cluster);
        this.settings = config.settings();
        this.log = newLog("", FlowSource.NONE);
    }

    /** Reads {@code backend}'s reports from now on, closing the source read before. */
    public synchronized void use(String backendName, FlowSource next) {
        FlowSource previous = source;
        if (previous == next) {
            return;
        }
        try {
            previous.close();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "closing the flow source of backend {0} failed: {1}", backend, e.toString());
        }
        FlowLog fresh = newLog(backendName, next);
        log = fresh;
        for (Follower f : followers) {
            f.moveTo(fresh);
        }
        backend = backendName;
        source = next;
        metrics.flowLossFrom(next::lost);
        metrics.flowReportsFrom(next::reported);
        // Also with nothing to report: the kernel may hold a previous run's settings (a pinned map, log rules) until told.
        try {
            next.start(settings, fresh::record);
            reporting(settings);
        } catch (RuntimeException e) {
            // Reports are for people; enforcement goes on without them.
            LOG.log(System.Logger.Level.WARNING, "flow verdicts of backend {0} cannot be read: {1}", backendName, e.toString());
        }
    }

    /**
     * What the kernel reports from now on (the configuration's {@code Flows.Denied}, {@code Allowed},
     * {@code RatePerSecond} and {@code IntervalSeconds} changed while the agent runs): told before this returns
     * (a netfilter backend re-renders its chains), then shown by {@code npm_flow_reporting}. The flow log keeps
     * what it holds: its size and retention are set when it is made.
     */
    public synchronized void reconfigure(FlowSettings next) {
        if (next.equals(settings)) {
            return;
        }
        settings = next;
        try {
            source.reconfigure(next);
            reporting(next);
            LOG.log(System.Logger.Level.INFO, "flow verdicts of backend {0}: denied {1}, allowed {2}, {3} a second, every {4} s", backend,
                    next.denied(), next.allowed(), next.ratePerSecond(), next.interval().toSeconds());
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "flow verdicts of backend {0} cannot be reconfigured: {1}", backend, e.toString());
        }
    }

    private void reporting(FlowSettings s) {
        metrics.flowReporting.labelValues("denied").set(s.denied() ? 1 : 0);
        metrics.flowReporting.labelValues("allowed").set(s.allowed() ? 1 : 0);
    }

    private FlowLog newLog(String backendName, FlowSource from) {
        FlowLog.NearMiss nearMiss = (report, isolation) -> nearest.nearest(isolation.direction(), isolation.policies(), report.source(),
                report.destination(), report.protocol(), report.port());
        return new FlowLog(node, backendName, from.refs(), cluster::podKeyAt, nearMiss, metrics::countFlow, config.retention(),
                config.maxFlows());
    }

    /**
     * One follower, registered on the log it reads now. Registered only while it follows: a log without followers
     * builds no flow for anyone (a flood of new flows nobody reads costs no nearest-rule scan).
     */
    private static final class Follower {
        private final FlowFilter filter;
        private final Consumer<FlowRecord> sink;
        private AutoCloseable registration;

        Follower(FlowFilter filter, Consumer<FlowRecord> sink) {
            this.filter = filter;
            this.sink = sink;
        }

        synchronized void moveTo(FlowLog next) {
            stop();
            registration = next.follow(filter, flow -> {
                try {
                    sink.accept(flow);
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "a flow follower failed: {0}", e.toString());
                }
            });
        }

        synchronized void stop() {
            if (registration != null) {
                try {
                    registration.close();
                } catch (Exception e) {
                    // FlowLog's registrations only remove a list entry
                }
                registration = null;
            }
        }
    }

    /** The flows the filter keeps, latest packet first. */
    public List<FlowRecord> flows(FlowFilter filter) {
        return log.flows(filter);
    }

    /**
     * Every flow the filter keeps, each time a report changes it, until closed. The sink runs on the reporting
     * thread: it must not block (hand the flow to a queue of the reader's own).
     */
    public synchronized AutoCloseable follow(FlowFilter filter, Consumer<FlowRecord> sink) {
        Follower f = new Follower(filter, sink);
        f.moveTo(log);
        followers.add(f);
        return () -> {
            followers.remove(f);
            f.stop();
        };
    }

    /** The backend whose reports are read ("" before {@link #use}). */
    public String backend() {
        return backend;
    }

    @Override
    public synchronized void close() {
        source.close();
        source = FlowSource.NONE;
    }
}
