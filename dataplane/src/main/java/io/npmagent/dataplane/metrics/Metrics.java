package io.npmagent.dataplane.metrics;

import io.npmagent.dataplane.backend.BackendStatus;
import io.npmagent.dataplane.flow.Attribution;
import io.npmagent.dataplane.flow.FlowRecord;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Every metric the agent exports, in one place. Names keep Azure NPM's where NPM has one, but every
 * {@code _seconds} metric really holds seconds. Latency buckets run from 1 ms to 2 min, so both a
 * map update and a pathological restore land in a real bucket.
 *
 * <p>One instance per registry: tests give each agent its own {@link PrometheusRegistry}.
 */
public final class Metrics {
    /** 1 ms to 2 min. */
    public static final double[] LATENCY_BUCKETS = {
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120
    };
    /** Policies per batch: 1 to NPM's default maximum and beyond. */
    public static final double[] BATCH_SIZE_BUCKETS = {1, 2, 5, 10, 25, 50, 100, 250, 500, 1000};

    /** One {@code iptables-restore}; operation: apply, reconcile, uninstall. */
    public final Histogram iptablesRestoreLatency;
    public final Counter iptablesRestoreFailures;
    /** One {@code ipset restore}. */
    public final Histogram ipsetRestoreLatency;
    /** One {@code nft -f}; operation: apply, reconcile, uninstall. */
    public final Histogram nftRestoreLatency;
    public final Counter nftRestoreFailures;
    /** One batch through one backend, all of its kernel calls included. */
    public final Histogram applyLatency;
    /** From the moment an event reached the queue to the moment all of its changes were in the kernel. */
    public final Histogram policyApplyDelay;
    /** Units of a failed batch that failed on their own (kind: addresses, peerset, policy, pod). */
    public final Counter applyFailures;
    /** Units refused at their last try and waiting for a retry, now (kind as above): what NpmAgentApplyFailing reads. */
    public final Gauge applyFailingParts;
    public final Gauge pendingNetPols;
    public final Gauge pendingEvents;
    public final Histogram batchSize;
    public final Gauge startupSeconds;
    public final Gauge numPolicies;
    public final Gauge numIptablesRules;
    public final Gauge numIpsets;
    public final Gauge numIpsetEntries;
    /** One batched map write (or per-element fallback) of the eBPF backend; map: npm_policy, npm_ipcache... */
    public final Histogram bpfMapUpdateLatency;
    /** Entries in each eBPF map (both copies of the state) and how full it is (entries / max_entries). */
    public final Gauge bpfMapEntries;
    public final Gauge bpfMapPressure;
    /** Packets of flows the kernel reported (flow verdicts), per what decided them; no address or port labels. */
    public final Counter flowPackets;
    /** Flows the kernel reported for the first time, per what decided them. */
    public final Counter flows;
    /** Whether the kernel is told to report each verdict's flows (the configuration's Flows.Denied, Flows.Allowed, as applied). */
    public final Gauge flowReporting;
    private volatile Supplier<Map<List<String>, long[]>> dropSource = Map::of;
    private volatile Supplier<Map<List<String>, long[]>> bandwidthSource = Map::of;
    private volatile Supplier<long[]> congestionSource = () -> new long[2];
    private volatile Supplier<Map<String, Long>> flowLossSource = Map::of;
    private volatile Supplier<Map<String, Long>> flowReportSource = Map::of;

    public Metrics(PrometheusRegistry registry) {
        iptablesRestoreLatency = Histogram.builder()
                .name("npm_linux_iptables_restore_latency_seconds")
                .help("Duration of one iptables-restore (or ip6tables-restore) call, in seconds.")
                .labelNames("operation")
                .classicUpperBounds(LATENCY_BUCKETS)
                .classicOnly()
                .register(registry);
        iptablesRestoreFailures = Counter.builder()
                .name("npm_linux_iptables_restore_failure_total")
                .help("iptables-restore calls that failed.")
                .labelNames("operation")
                .register(registry);
        ipsetRestoreLatency = Histogram.builder()
                .name("npm_ipset_restore_latency_seconds")
                .help("Duration of one ipset restore call, in seconds.")
                .classicUpperBounds(LATENCY_BUCKETS)
                .classicOnly()
                .register(registry);
        nftRestoreLatency = Histogram.builder()
                .name("npm_nft_restore_latency_seconds")
                .help("Duration of one nft -f transaction, in seconds.")
                .labelNames("operation")
                .classicUpperBounds(LATENCY_BUCKETS)
                .classicOnly()
                .register(registry);
        nftRestoreFailures = Counter.builder()
                .name("npm_nft_restore_failure_total")
                .help("nft -f transactions that failed.")
                .labelNames("operation")
                .register(registry);
        applyLatency = Histogram.builder()
                .name("npm_apply_latency_seconds")
                .help("Duration of applying one batch to one backend, in seconds.")
                .labelNames("backend")
                .classicUpperBounds(LATENCY_BUCKETS)
                .classicOnly()
                .register(registry);
        policyApplyDelay = Histogram.builder()
                .name("npm_policy_apply_delay_seconds")
                .help("Time from an event reaching the queue to all of its changes being in the kernel, in seconds.")
                .classicUpperBounds(LATENCY_BUCKETS)
                .classicOnly()
                .register(registry);
        applyFailures = Counter.builder()
                .name("npm_apply_failures_total")
                .help("Parts of batches the backend rejected (kind: addresses, peerset, policy, pod); each is retried with backoff.")
                .labelNames("kind")
                .register(registry);
        applyFailingParts = Gauge.builder()
                .name("npm_apply_failing_parts")
                .help("Parts of batches the backend refused at their last try and waiting for the next (kind: addresses, peerset, policy, pod):"
                        + " each stays until it lands or a newer change drops it, so the alert NpmAgentApplyFailing reads how long one has been refused.")
                .labelNames("kind")
                .register(registry);
        pendingNetPols = Gauge.builder()
                .name("npm_pending_netpols")
                .help("NetworkPolicy changes waiting in the queue.")
                .register(registry);
        pendingEvents = Gauge.builder()
                .name("npm_pending_events")
                .help("Cluster events (pods, namespaces, policies) received from the source and not yet through the compiler.")
                .register(registry);
        batchSize = Histogram.builder()
                .name("npm_batch_size")
                .help("NetworkPolicy changes per applied batch.")
                .classicUpperBounds(BATCH_SIZE_BUCKETS)
                .classicOnly()
                .register(registry);
        startupSeconds = Gauge.builder()
                .name("npm_startup_seconds")
                .help("The start, by phase: list (start to every informer cache synced) and compile_and_apply (the whole state compiled and in the kernel as one batch).")
                .labelNames("phase")
                .register(registry);
        numPolicies = Gauge.builder()
                .name("npm_num_policies")
                .help("NetworkPolicies and ClusterNetworkPolicies in the kernel.")
                .register(registry);
        numIptablesRules = Gauge.builder()
                .name("npm_num_iptables_rules")
                .help("Rules in the agent's own iptables chains (IPv4 and IPv6).")
                .register(registry);
        numIpsets = Gauge.builder()
                .name("npm_num_ipsets")
                .help("The agent's ipsets (or nft sets).")
                .register(registry);
        numIpsetEntries = Gauge.builder()
                .name("npm_num_ipset_entries")
                .help("Entries in the agent's ipsets (or nft sets).")
                .register(registry);
        bpfMapUpdateLatency = Histogram.builder()
                .name("npm_bpf_map_update_latency_seconds")
                .help("Duration of one batched write to an eBPF map, in seconds.")
                .labelNames("map")
                .classicUpperBounds(LATENCY_BUCKETS)
                .classicOnly()
                .register(registry);
        bpfMapEntries = Gauge.builder()
                .name("npm_bpf_map_entries")
                .help("Entries in an eBPF map (both copies of the state).")
                .labelNames("map")
                .register(registry);
        bpfMapPressure = Gauge.builder()
                .name("npm_bpf_map_pressure")
                .help("How full an eBPF map is: entries over max_entries.")
                .labelNames("map")
                .register(registry);
        flowPackets = Counter.builder()
                .name("npm_flow_packets_total")
                .help("Packets of the flows the kernel reported (denied flows, and allowed ones where enabled), per verdict, reason, "
                        + "direction and what decided: kind, policy_namespace, policy, tier and rule (a rule's index; rule isolation, "
                        + "policy empty: a NetworkPolicy default deny in that namespace, whichever policies isolate the pod).")
                .labelNames("verdict", "reason", "direction", "kind", "policy_namespace", "policy", "tier", "rule")
                .register(registry);
        flows = Counter.builder()
                .name("npm_flows_total")
                .help("Flows the kernel reported for the first time, labelled as npm_flow_packets_total.")
                .labelNames("verdict", "reason", "direction", "kind", "policy_namespace", "policy", "tier", "rule")
                .register(registry);
        flowReporting = Gauge.builder()
                .name("npm_flow_reporting")
                .help("1 when the backend's kernel is told to report the verdict's flows (Flows.Denied, Flows.Allowed), 0 when not: set once "
                        + "the kernel has the setting (a netfilter backend's chains re-rendered), so a change in the configuration shows "
                        + "here when it is in force.")
                .labelNames("verdict")
                .register(registry);
        CounterWithCallback.builder()
                .name("npm_flow_reports_total")
                .help("Flow reports the agent received, per where from: kernel (the kernel's own reports, ring buffer records or NFLOG "
                        + "messages: what Flows.RatePerSecond bounds) or counters (summaries the agent read from the flows' counters).")
                .labelNames("from")
                .callback(cb -> flowReportSource.get().forEach((from, n) -> cb.call(n, from)))
                .register(registry);
        CounterWithCallback.builder()
                .name("npm_flow_reports_lost_total")
                .help("Flow reports the kernel could not deliver, per why: rate (over the per-CPU rate limit), buffer (the ring "
                        + "buffer or netlink queue full), evicted (a flow record pushed out before its counts were read). The packets "
                        + "themselves were judged as always; only their report is missing.")
                .labelNames("why")
                .callback(cb -> flowLossSource.get().forEach((why, n) -> cb.call(n, why)))
                .register(registry);
        perPodCounter(registry, "npm_bpf_policy_drops_total", "Packets the eBPF programs dropped by policy, per local pod and direction.",
                () -> dropSource, 0);
        perPodCounter(registry, "npm_bpf_policy_dropped_bytes_total", "Bytes the eBPF programs dropped by policy, per local pod and direction.",
                () -> dropSource, 1);
        perPodCounter(registry, "npm_bandwidth_packets_total", "Packets of a rate-limited local pod that its limit let pass, per direction.",
                () -> bandwidthSource, 0);
        perPodCounter(registry, "npm_bandwidth_bytes_total", "Bytes of a rate-limited local pod that its limit let pass, per direction.",
                () -> bandwidthSource, 1);
        perPodCounter(registry, "npm_bandwidth_ecn_marked_total", "Packets a pod's egress limit passed marked ECN CE (congestion experienced).",
                () -> bandwidthSource, 2);
        perPodCounter(registry, "npm_bandwidth_horizon_drops_total", "Packets a pod's egress limit dropped: they would have departed past the EDT horizon.",
                () -> bandwidthSource, 3);
        perPodCounter(registry, "npm_bandwidth_policed_total", "Packets a pod's ingress limit dropped: its token bucket was in debt.",
                () -> bandwidthSource, 4);
        perPodCounter(registry, "npm_bandwidth_protected_total",
                "Large packets a pod's egress limit let through in the last tenth of its EDT horizon: their TCP flow had fewer than 2 packets in flight.",
                () -> bandwidthSource, 5);
        perPodCounter(registry, "npm_bandwidth_slowed_total",
                "Packets a pod's TCP was told to slow down on (a congestion notification at the socket) as its egress queue filled.",
                () -> bandwidthSource, 6);
        perPodCounter(registry, "npm_bandwidth_held_total",
                "Packets held back at a pod's socket past its EDT horizon: TCP keeps them and sends them later; no loss, no retransmission.",
                () -> bandwidthSource, 7);
        CounterWithCallback.builder()
                .name("npm_tcp_congestion_total")
                .help("New TCP connections of local pods given the congestion control their npm-agent.io/tcp-congestion names (result=set), "
                        + "or refused it by the kernel (result=refused: the algorithm is not loaded any more).")
                .labelNames("result")
                .callback(cb -> {
                    long[] v = congestionSource.get();
                    cb.call(v[0], "set");
                    cb.call(v[1], "refused");
                })
                .register(registry);
    }

    /**
     * A counter per (namespace, pod, direction) read at each scrape from element {@code index} of what a backend
     * reports. {@code namespace} and {@code pod} are the counted pod's, as kube-state-metrics labels the pods it
     * reports on: the shipped PodMonitor honours them (honorLabels), so they are not renamed exported_* under the
     * agent's own pod's target labels.
     */
    private void perPodCounter(PrometheusRegistry registry, String name, String help, Supplier<Supplier<Map<List<String>, long[]>>> source, int index) {
        CounterWithCallback.builder()
                .name(name)
                .help(help)
                .labelNames("namespace", "pod", "direction")
                .callback(cb -> source.get().get().forEach((labels, v) -> cb.call(v[index], labels.get(0), labels.get(1), labels.get(2))))
                .register(registry);
    }

    /**
     * Where {@code npm_bpf_policy_drops_total{namespace,pod,direction}} and {@code npm_bpf_policy_dropped_bytes_total}
     * are read from at each scrape: per (namespace, pod, direction), packets and bytes dropped by policy. The last
     * backend to call this is the one read (a restarted backend replaces its predecessor).
     */
    public void policyDropsFrom(Supplier<Map<List<String>, long[]>> source) {
        dropSource = source;
    }

    /**
     * Where the {@code npm_bandwidth_*_total{namespace,pod,direction}} counters are read from: per (namespace, pod,
     * direction), packets and bytes passed, ECN-marked, dropped at the horizon, policed, protected at the
     * horizon, slowed and held at the socket.
     */
    public void bandwidthFrom(Supplier<Map<List<String>, long[]>> source) {
        bandwidthSource = source;
    }

    /** Counts what one report added to a flow ({@link io.npmagent.dataplane.flow.FlowLog.Counter}). */
    public void countFlow(FlowRecord flow, long packets, long bytes) {
        String verdict = flow.verdict().name().toLowerCase();
        String reason = flow.reason() == null ? "" : flow.reason().label();
        String direction = flow.direction().apiName().toLowerCase();
        Attribution a = flow.attribution();
        String kind = a == null ? "" : a.kind();
        String tier = a == null || a.tier() == null ? "" : a.tier().apiName();
        List<List<String>> series = a == null || a.metricSeries().isEmpty() ? List.of(List.of("", "", "")) : a.metricSeries();
        for (List<String> s : series) {
            String[] labels = {verdict, reason, direction, kind, s.get(0), s.get(1), tier, s.get(2)};
            flowPackets.labelValues(labels).inc(packets);
            if (flow.reports() == 1) {
                flows.labelValues(labels).inc();
            }
        }
    }

    /** Where {@code npm_flow_reports_lost_total{why}} is read from: per why, reports lost since the backend started. */
    public void flowLossFrom(Supplier<Map<String, Long>> source) {
        flowLossSource = source;
    }

    /** Where {@code npm_flow_reports_total{from}} is read from: per where from, reports received since the backend started. */
    public void flowReportsFrom(Supplier<Map<String, Long>> source) {
        flowReportSource = source;
    }

    /** Where {@code npm_tcp_congestion_total{result}} is read from: connections set, and refused. */
    public void congestionFrom(Supplier<long[]> source) {
        congestionSource = source;
    }

    /** Sets the gauges of what a backend holds in the kernel. */
    public void kernelHolds(BackendStatus status) {
        numIptablesRules.set(status.rules());
        numIpsets.set(status.sets());
        numIpsetEntries.set(status.setEntries());
    }

    /** Seconds since {@code startNanos} (a {@link System#nanoTime()} reading). */
    public static double secondsSince(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e9;
    }
}
