package io.npmagent.agent.run;

import io.npmagent.agent.backend.Backends;
import io.npmagent.agent.config.FlowConfig;
import io.npmagent.agent.flows.AgentFlows;
import io.npmagent.agent.flows.ClusterIndex;
import io.npmagent.dataplane.backend.Backend;
import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.batch.BatchQueue;
import io.npmagent.dataplane.batch.FlushScheduler;
import io.npmagent.dataplane.batch.QueueConfig;
import io.npmagent.dataplane.batch.RetryPolicy;
import io.npmagent.dataplane.batch.UnitFailure;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.ApiSyntax;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.ObjectRef;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.ValidationError;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.prometheus.metrics.expositionformats.OpenMetricsTextFormatWriter;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The agent's pipeline, whatever feeds it: cluster snapshots in, compiler, batching queue, backend.
 * One model thread calls {@link #apply}; the queue's flush thread writes the kernel.
 *
 * <p><b>Start.</b> Nothing reaches the kernel before the first whole snapshot. That snapshot is
 * compiled and sent as one batch, which the backend adopts (it writes only what differs from what an
 * earlier run left), so a restart neither opens a selected pod nor cuts an allowed flow. Later snapshots
 * become the events that turn the last one into them, through the same compiler path informer events
 * take.
 *
 * <p><b>Flows.</b> The backend's flow verdicts go to {@link #flows()}, which names pods and finds near misses in
 * a {@link ClusterIndex} fed the same events as the compiler, on the model thread.
 */
public final class Agent implements AutoCloseable {
    private static final Path AVAILABLE_CONGESTION = Path.of("/proc/sys/net/ipv4/tcp_available_congestion_control");
    private final Backend backend;
    private final String backendReason;
    private final PolicyCompiler compiler;
    private final BatchQueue queue;
    private final PrometheusRegistry registry;
    private final Metrics metrics;
    private final ClusterIndex index = new ClusterIndex();
    private final AgentFlows flows;
    private ClusterState current;
    private boolean started;

    public Agent(Backends.Chosen chosen, String nodeName, QueueConfig config, PrometheusRegistry registry, Metrics metrics,
            Duration reconcilePeriod) {
        this(chosen, nodeName, config, registry, metrics, reconcilePeriod, FlowConfig.DEFAULTS);
    }

    /** @param flowConfig what the backend reports and how the flow log keeps it (the configuration's {@code Flows}) */
    public Agent(Backends.Chosen chosen, String nodeName, QueueConfig config, PrometheusRegistry registry, Metrics metrics,
            Duration reconcilePeriod, FlowConfig flowConfig) {
        this.backend = chosen.backend();
        this.backendReason = chosen.reason();
        this.compiler = new PolicyCompiler(nodeName, backend.enforcesCongestion() ? availableCongestionControls() : null);
        this.registry = registry;
        this.metrics = metrics;
        this.queue = new BatchQueue(backend, config, RetryPolicy.DEFAULTS, InstantSource.system(),
                FlushScheduler.singleThread("npm-agent-flush"), metrics);
        queue.reconcileEvery(reconcilePeriod);
        this.flows = new AgentFlows(nodeName, flowConfig, index, metrics);
        flows.use(backend.name(), backend.flows());
    }

    /** The node's flow verdicts: what the backend's kernel reported, for /debug/flows and the Events. */
    public AgentFlows flows() {
        return flows;
    }

    /**
     * The congestion controls this kernel offers, which a pod's {@code npm-agent.io/tcp-congestion} must
     * name (the list is the kernel's, not a namespace's). Unreadable: null, and only the syntax is checked.
     */
    static Set<String> availableCongestionControls() {
        try {
            return Set.of(Files.readString(AVAILABLE_CONGESTION).strip().split("\\s+"));
        } catch (IOException | IllegalArgumentException e) {
            System.getLogger(Agent.class.getName()).log(System.Logger.Level.WARNING, "cannot read {0}: {1}", AVAILABLE_CONGESTION, e.toString());
            return null;
        }
    }

    /** Brings the desired state to {@code next}: the whole of it at first, then what changed. */
    public void apply(ClusterState next) {
        if (current == null) {
            start(next.asEvents());
        } else {
            current.diff(next).forEach(this::update);
        }
        current = next;
    }

    /**
     * The first desired state, whole (namespaces, then pods, then policies), as one batch that the backend
     * adopts; then the queue starts. Nothing reaches the kernel before this.
     */
    public void start(List<ClusterEvent> whole) {
        if (started) {
            throw new IllegalStateException("the agent has already started");
        }
        long t0 = System.nanoTime();
        whole.forEach(index::take);
        queue.submit(compiler.load(whole));
        queue.flushNow();
        metrics.startupSeconds.labelValues("compile_and_apply").set(Metrics.secondsSince(t0));
        queue.start();
        started = true;
    }

    /** How long the source took to list the cluster before {@link #start}: the other half of the start. */
    public void noteListed(double seconds) {
        metrics.startupSeconds.labelValues("list").set(seconds);
    }

    /** One change after the start, through the compiler into the queue. */
    public void update(ClusterEvent event) {
        index.take(event);
        queue.submit(compiler.apply(event).delta());
    }

    /** How many source events wait for the model thread: a backlog that grows is an agent falling behind. */
    public void noteBacklog(int events) {
        metrics.pendingEvents.set(events);
    }

    /** Takes new batching settings between batches (a configuration reload). */
    public void reconfigure(QueueConfig config) {
        queue.reconfigure(config);
    }

    public QueueConfig queueConfig() {
        return queue.config();
    }

    /** Whether everything applied so far is in the kernel. */
    public boolean converged() {
        return started && queue.idle();
    }

    public String backendName() {
        return backend.name();
    }

    /** Why this backend: what auto probed, or that it was asked for. */
    public String backendReason() {
        return backendReason;
    }

    public int policies() {
        return queue.policiesInKernel();
    }

    /** Parts the kernel refused, with its words; they are being retried. */
    public List<String> failures() {
        List<String> out = new ArrayList<>();
        for (UnitFailure f : queue.failures()) {
            out.add(ApiSyntax.escapeControls(f.toString()));
        }
        return out;
    }

    /**
     * Problems in the objects (each invalid part failing closed), and bandwidth limits the backend does
     * not enforce.
     */
    public List<String> problems() {
        List<String> out = new ArrayList<>();
        compiler.errors().values().forEach(list -> list.forEach(e -> out.add(ApiSyntax.escapeControls(e.toString()))));
        if (!backend.enforcesBandwidth()) {
            List<PodKey> limited = compiler.rateLimitedPods();
            if (!limited.isEmpty()) {
                out.add(ApiSyntax.escapeControls(String.format("bandwidth limits of %d local pods are not enforced: the %s backend "
                        + "enforces none, only bpf does (first: %s)", limited.size(), backend.name(), limited.get(0))));
            }
        }
        if (!backend.enforcesCongestion()) {
            List<PodKey> choosing = compiler.congestionPods();
            if (!choosing.isEmpty()) {
                out.add(ApiSyntax.escapeControls(String.format("TCP congestion controls of %d local pods are not applied: the %s backend "
                        + "applies none (only bpf does, given --cgroup-root); their connections keep the default (first: %s)",
                        choosing.size(), backend.name(), choosing.get(0))));
            }
        }
        return out;
    }

    /** Objects with invalid parts, as the compiler found them; for the model thread only. */
    public Map<ObjectRef, List<ValidationError>> objectErrors() {
        return compiler.errors();
    }

    /**
     * The objects whose part of the desired state the backend refuses (the kernel's words, as the queue
     * last heard them): a policy, a ClusterNetworkPolicy or a pod. Shared parts (peer sets, the address table) belong to no one
     * object; they are in {@link #failures}.
     */
    public Map<ObjectRef, String> refusedObjects() {
        Map<ObjectRef, String> out = new HashMap<>();
        for (UnitFailure f : queue.failures()) {
            if (f.unit() instanceof Batch.UnitKey.Policy p) {
                out.put(ObjectRef.of(p.policy()), f.error());
            } else if (f.unit() instanceof Batch.UnitKey.ClusterPolicy p) {
                out.put(ObjectRef.clusterNetworkPolicy(p.name()), f.error());
            } else if (f.unit() instanceof Batch.UnitKey.Pod p) {
                out.put(ObjectRef.of(p.pod()), f.error());
            }
        }
        return out;
    }

    /** Where the agent's metrics are registered (the parts of the agent that add their own). */
    public PrometheusRegistry registry() {
        return registry;
    }

    /** Writes the metrics, as OpenMetrics text or Prometheus text; safe from any thread. */
    public void writeMetrics(java.io.OutputStream out, boolean openMetrics) throws IOException {
        if (openMetrics) {
            OpenMetricsTextFormatWriter.create().write(out, registry.scrape());
        } else {
            PrometheusTextFormatWriter.create().write(out, registry.scrape());
        }
    }

    /** Policy changes waiting in the queue. */
    public int pendingPolicies() {
        return queue.pendingPolicies();
    }

    /** The metrics in Prometheus text format. */
    public String metricsText() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            PrometheusTextFormatWriter.create().write(out, registry.scrape());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        queue.close();
        flows.close();
    }
}
