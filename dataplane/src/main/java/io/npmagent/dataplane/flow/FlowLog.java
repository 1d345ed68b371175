package io.npmagent.dataplane.flow;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The node's recent flows: every backend's kernel reports ({@link FlowReport}) merged into one record per
 * flow, kept while reports keep coming and for {@code retention} after the last, at most {@code maxFlows}
 * (the least recently reported go first). Readers list ({@link #flows}) or follow ({@link #follow}).
 *
 * <p>Counting: a report carries its kernel record's totals; the log adds what each report adds to the
 * previous one of the same record ({@code instance}), and a new record's totals whole, so a flow whose
 * kernel record expired and came back counts on. Pods and the attribution are resolved once, at the
 * flow's first report (its first packet: within a second of the verdict), and never re-read. The nearest
 * rule of a default deny is found once too, when the flow is first read (listed, or told to a follower):
 * it scans the isolating policies' rules, so a flood of new flows nobody reads does not pay for it.
 *
 * <p>Thread-safe: backends' readers record on their threads, HTTP readers list and follow on theirs.
 */
public final class FlowLog {
    /** For a default deny: the isolating policies' rule that came closest, and what it missed; null if none. */
    @FunctionalInterface
    public interface NearMiss {
        NearMiss NONE = (report, isolation) -> null;

        String nearest(FlowReport report, Attribution.Isolation isolation);
    }

    /** Told of each report's added packets and bytes, with the flow as it now is (metrics). */
    @FunctionalInterface
    public interface Counter {
        Counter NONE = (flow, packets, bytes) -> {};

        void count(FlowRecord flow, long packets, long bytes);
    }

    private final String node;
    private final String backend;
    private final AttributionRefs refs;
    private final Function<IpAddress, PodKey> pods;
    private final NearMiss nearMiss;
    private final Counter counter;
    private final Cache<FlowReport.FlowKey, Flow> flows;
    private final List<Follower> followers = new CopyOnWriteArrayList<>();

    /**
     * @param pods which pod holds an address (null: none this agent knows)
     */
    public FlowLog(String node, String backend, AttributionRefs refs, Function<IpAddress, PodKey> pods, NearMiss nearMiss, Counter counter,
            Duration retention, int maxFlows) {
        this.node = node;
        this.backend = backend;
        this.refs = refs;
        this.pods = pods;
        this.nearMiss = nearMiss;
        this.counter = counter;
        this.flows = Caffeine.newBuilder().expireAfterWrite(retention).maximumSize(maxFlows).build();
    }

    /** Merges one kernel report into its flow and tells followers and the counter. */
    public void record(FlowReport report) {
        long[] added = new long[2];
        Flow flow = flows.asMap().compute(report.key(), (k, f) -> {
            if (f == null) {
                f = new Flow(resolve(report), report);
            }
            f.merge(report, added);
            return f;
        });
        counter.count(flow.snapshot(null), added[0], added[1]);
        if (!followers.isEmpty()) {
            FlowRecord now = flow.snapshot(nearMiss);
            for (Follower follower : followers) {
                follower.offer(now);
            }
        }
    }

    /** The flows the filter keeps, latest packet first. */
    public List<FlowRecord> flows(FlowFilter filter) {
        return flows.asMap().values().stream().map(f -> f.snapshot(nearMiss)).filter(filter::test)
                .sorted(Comparator.comparing(FlowRecord::last).reversed()).toList();
    }

    /** Every flow the filter keeps, each time a report changes it, until closed. */
    public AutoCloseable follow(FlowFilter filter, Consumer<FlowRecord> sink) {
        Follower f = new Follower(filter, sink);
        followers.add(f);
        return () -> followers.remove(f);
    }

    private FlowRecord resolve(FlowReport r) {
        Attribution attribution = r.ref() == AttributionRefs.NONE ? null : refs.resolve(r.ref()).orElse(null);
        FlowRecord.Service service = r.service() == null ? null : new FlowRecord.Service(r.service(), r.servicePort());
        return new FlowRecord(r.first(), r.last(), node, backend, r.verdict(), r.reason(), r.direction(), r.reporter(),
                r.source().v6() ? "IPv6" : "IPv4", FlowRecord.protocolName(r.protocol()),
                new FlowRecord.Peer(r.source(), pods.apply(r.source())), new FlowRecord.Peer(r.destination(), pods.apply(r.destination())),
                r.port(), service, 0, 0, 0, attribution, null);
    }

    /** One flow's running totals; guarded by the cache's compute for writes, by itself for reads. */
    private static final class Flow {
        private final FlowRecord resolved;
        /** The first report, which the nearest rule is found for; dropped once it is. */
        private FlowReport firstReport;
        private String nearest;
        private long instance;
        private long instancePackets;
        private long instanceBytes;
        private long carriedPackets;
        private long carriedBytes;
        private long reports;
        private FlowReport latest;

        Flow(FlowRecord resolved, FlowReport firstReport) {
            this.resolved = resolved;
            this.firstReport = firstReport;
        }

        synchronized void merge(FlowReport r, long[] added) {
            if (latest != null && r.instance() == instance) {
                added[0] = Math.max(0, r.packets() - instancePackets);
                added[1] = Math.max(0, r.bytes() - instanceBytes);
                instancePackets = Math.max(instancePackets, r.packets());
                instanceBytes = Math.max(instanceBytes, r.bytes());
            } else {
                carriedPackets += instancePackets;
                carriedBytes += instanceBytes;
                instance = r.instance();
                instancePackets = r.packets();
                instanceBytes = r.bytes();
                added[0] = r.packets();
                added[1] = r.bytes();
            }
            reports++;
            if (latest == null || !r.last().isBefore(latest.last())) {
                latest = r;
            }
        }

        /** The flow now; with {@code nearMiss}, the nearest rule found (once) if it has none yet; null: without it. */
        synchronized FlowRecord snapshot(NearMiss nearMiss) {
            FlowRecord f = resolved;
            if (nearMiss != null && firstReport != null) {
                nearest = f.attribution() instanceof Attribution.Isolation isolation ? nearMiss.nearest(firstReport, isolation) : null;
                firstReport = null;
            }
            return new FlowRecord(f.first(), latest == null ? f.last() : latest.last(), f.node(), f.backend(), f.verdict(), f.reason(),
                    f.direction(), f.reporter(), f.family(), f.protocol(), f.source(), f.destination(), f.port(), f.service(),
                    carriedPackets + instancePackets, carriedBytes + instanceBytes, reports, f.attribution(), nearest);
        }
    }

    private record Follower(FlowFilter filter, Consumer<FlowRecord> sink) {
        void offer(FlowRecord f) {
            if (filter.test(f)) {
                sink.accept(f);
            }
        }
    }
}
