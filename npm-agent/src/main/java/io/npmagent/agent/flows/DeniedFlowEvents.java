package io.npmagent.agent.flows;

import io.npmagent.dataplane.flow.DropReason;
import io.npmagent.dataplane.flow.FlowFilter;
import io.npmagent.dataplane.flow.FlowRecord;
import io.npmagent.dataplane.flow.FlowVerdict;
import io.npmagent.dataplane.model.ApiSyntax;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.PodKey;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Opt-in ({@code Flows.Events}) Warning Events {@value #REASON} on the pod whose policy denied a flow: the
 * destination for ingress, the source for egress. Told of every flow update (a follower of the flow log), it
 * posts for policy drops only, once per pod, attribution, peer, port and protocol in {@link #DEDUP} (10
 * minutes), and at most {@code perMinute} a minute on this node; what the cap holds back is counted in
 * {@code npm_flow_events_skipped_total}, so an application hammering a closed port cannot flood the API
 * server. Posting itself is the {@link Poster}'s (the agent's: asynchronous, through {@code ProblemEvents}).
 *
 * <p>Thread-safe: flows arrive on the backend's reader thread, the switch flips on the configuration's.
 */
public final class DeniedFlowEvents implements Consumer<FlowRecord> {
    static final String REASON = "NetworkPolicyDenied";
    static final Duration DEDUP = Duration.ofMinutes(10);
    private static final Duration WINDOW = Duration.ofMinutes(1);
    private static final FlowFilter DENIED = new FlowFilter(FlowVerdict.DENIED, null, null, null, null);

    /** Posts one Warning Event on a pod. */
    @FunctionalInterface
    public interface Poster {
        void post(PodKey pod, String reason, String message);
    }

    private record Key(PodKey pod, String attribution, String peer, String protocol, int port) {}

    private final Poster poster;
    private final InstantSource clock;
    private final int perMinute;
    private final Counter skipped;
    private final Map<Key, Instant> posted = new HashMap<>();
    private final Deque<Instant> lastMinute = new ArrayDeque<>();
    private volatile boolean enabled;
    private final Object registrationLock = new Object();
    private AgentFlows flows;
    private AutoCloseable registration;

    public DeniedFlowEvents(Poster poster, InstantSource clock, int perMinute, boolean enabled, PrometheusRegistry registry) {
        this.poster = poster;
        this.clock = clock;
        this.perMinute = perMinute;
        this.enabled = enabled;
        this.skipped = Counter.builder().name("npm_flow_events_skipped_total")
                .help("NetworkPolicyDenied events not posted because this node's agent had posted its most in the last minute.")
                .register(registry);
    }

    /** Flows.Events, live: also follows the flows' log ({@link #followWhileEnabled}) only while on. */
    public void enable(boolean on) {
        enabled = on;
        synchronized (registrationLock) {
            if (flows == null) {
                return;
            }
            if (on && registration == null) {
                registration = flows.follow(DENIED, this);
            } else if (!on && registration != null) {
                try {
                    registration.close();
                } catch (Exception e) {
                    // AgentFlows' registrations only remove a list entry
                }
                registration = null;
            }
        }
    }

    /**
     * Follows {@code flows}' denied flows while enabled, and not while off: a follower makes the log build each new
     * flow for it, its nearest rule looked up, which a flood of new flows nobody posts should not pay.
     */
    public void followWhileEnabled(AgentFlows flows) {
        synchronized (registrationLock) {
            this.flows = flows;
        }
        enable(enabled);
    }

    @Override
    public void accept(FlowRecord f) {
        if (!enabled || f.verdict() != FlowVerdict.DENIED || f.reason() != DropReason.POLICY || f.direction() == null) {
            return;
        }
        boolean ingress = f.direction() == Direction.INGRESS;
        FlowRecord.Peer owner = ingress ? f.destination() : f.source();
        FlowRecord.Peer peer = ingress ? f.source() : f.destination();
        if (owner.pod() == null) {
            return; // not a pod this agent knows: nowhere to post
        }
        Key key = new Key(owner.pod(), f.attributionText(), peer.address().toString(), f.protocol(), f.port());
        Instant now = clock.instant();
        synchronized (this) {
            posted.values().removeIf(at -> !at.plus(DEDUP).isAfter(now));
            if (posted.containsKey(key)) {
                return;
            }
            while (!lastMinute.isEmpty() && !lastMinute.peekFirst().plus(WINDOW).isAfter(now)) {
                lastMinute.removeFirst();
            }
            if (lastMinute.size() >= perMinute) {
                skipped.inc();
                return;
            }
            lastMinute.addLast(now);
            posted.put(key, now);
        }
        poster.post(owner.pod(), REASON, message(f, ingress, peer));
    }

    /** {@code ingress TCP from y/c (10.2.0.3) to port 80 denied on node n1: NetworkPolicy x/p isolates it ...; nearest: ...}. */
    static String message(FlowRecord f, boolean ingress, FlowRecord.Peer peer) {
        String port = f.port() == 0 ? "" : " port " + f.port();
        String text = (ingress ? "ingress " : "egress ") + f.protocol() + (ingress ? " from " + peer + " to" + port : " to " + peer + port)
                + " denied on node " + f.node() + " (" + f.backend() + "): " + f.attributionText()
                + (f.nearest() == null ? "" : "; nearest: " + f.nearest());
        return ApiSyntax.escapeControls(text);
    }
}
