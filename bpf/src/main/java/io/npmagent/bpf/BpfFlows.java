package io.npmagent.bpf;

import io.npmagent.bpf.libbpf.BpfException;
import io.npmagent.bpf.libbpf.BpfMap;
import io.npmagent.bpf.libbpf.RingBuffer;
import io.npmagent.bpf.maps.VerdictMaps;
import io.npmagent.dataplane.flow.AttributionRefs;
import io.npmagent.dataplane.flow.FlowReport;
import io.npmagent.dataplane.flow.FlowSettings;
import io.npmagent.dataplane.flow.FlowSource;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.ConcurrentModificationException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The programs' flow verdicts (verdicts.h), read by a thread of its own: every {@link #POLL} it takes what
 * the ring buffer holds (the programs do not wake it: a report costs them no wakeup), and every interval it
 * walks the flows' records for counts no report carried (a flow that stopped sending after a summary, or
 * whose reports were over the rate), so a flow's count is whole a poll after its interval. Reports arrive
 * carrying the attribution number the verdict read; {@link #refs} decodes them.
 *
 * <p>The configuration map is written at {@link #start} and at each {@link #reconfigure}; until then (and with
 * flows off) the programs report nothing and pay one array lookup per judged packet.
 */
final class BpfFlows implements FlowSource {
    private static final System.Logger LOG = System.getLogger(BpfFlows.class.getName());
    /** How often the ring buffer is emptied: a report reaches the log within this (and the program's decision). */
    static final Duration POLL = Duration.ofMillis(100);

    /** The flow-verdict maps of one loaded object (null in unit tests without a kernel: nothing is reported). */
    record Maps(BpfMap config, BpfMap flows, BpfMap events, BpfMap lost) implements AutoCloseable {
        @Override
        public void close() {
            for (BpfMap m : List.of(config, flows, events, lost)) {
                m.close();
            }
        }
    }

    private final AttributionRefs refs;
    private final Maps maps;
    /** Per flow (its key's bytes), the record last reported: its first packet (which record) and its packets; the reader thread's alone. */
    private final Map<ByteBuffer, Reported> reported = new HashMap<>();

    private record Reported(long first, long packets) {}
    private volatile boolean stopped;
    /** How often the records are swept: the settings' interval, as last configured. */
    private volatile Duration interval = FlowSettings.DEFAULT.interval();
    /** Whether any verdict is reported now. */
    private volatile boolean reporting;
    private final AtomicLong fromKernel = new AtomicLong();
    private final AtomicLong fromCounters = new AtomicLong();
    private Consumer<FlowReport> sink;
    private Thread reader;
    private RingBuffer ring;

    BpfFlows(AttributionRefs refs, Maps maps) {
        this.refs = refs;
        this.maps = maps;
    }

    @Override
    public AttributionRefs refs() {
        return refs;
    }

    @Override
    public synchronized void start(FlowSettings settings, Consumer<FlowReport> sink) {
        if (maps == null || this.sink != null) {
            return;
        }
        this.sink = sink;
        reconfigure(settings);
    }

    /** Writes the configuration map (the programs read it at each judged packet) and reads reports if any are asked for. */
    @Override
    public synchronized void reconfigure(FlowSettings settings) {
        if (maps == null || sink == null || stopped) {
            return;
        }
        interval = settings.interval();
        reporting = settings.any();
        maps.config().update(VerdictMaps.configKey(), VerdictMaps.config(settings));
        if (!settings.any() || reader != null) {
            return; // a reader once started stays: with nothing reported it finds the buffer empty
        }
        Consumer<FlowReport> to = sink;
        ring = RingBuffer.open(maps.events(), bytes -> deliver(bytes, to));
        reader = new Thread(() -> read(to), "npm-agent-flows");
        reader.setDaemon(true);
        reader.start();
    }

    private void read(Consumer<FlowReport> sink) {
        long nextSweep = System.nanoTime() + interval.toNanos();
        while (!stopped) {
            try {
                ring.consume();
                if (System.nanoTime() - nextSweep >= 0) {
                    if (reporting) { // turned off: what is left in the records is not swept for (a walk of up to 65,536 records)
                        sweep(sink);
                    }
                    nextSweep = System.nanoTime() + interval.toNanos();
                }
                Thread.sleep(POLL.toMillis());
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                if (!stopped) {
                    LOG.log(System.Logger.Level.WARNING, "flow verdicts: " + e.getMessage(), e);
                }
            }
        }
    }

    /** One ring buffer record to the sink. */
    private void deliver(byte[] bytes, Consumer<FlowReport> sink) {
        VerdictMaps.Event e = VerdictMaps.Event.decode(bytes);
        Reported now = new Reported(e.record().first(), e.record().packets());
        reported.merge(ByteBuffer.wrap(Arrays.copyOf(bytes, VerdictMaps.KEY_SIZE)), now,
                (old, fresh) -> old.first() == fresh.first() && old.packets() > fresh.packets() ? old : fresh);
        fromKernel.incrementAndGet();
        sink.accept(report(e, System.nanoTime(), Instant.now()));
    }

    /**
     * The records whose counts grew since their last report, as summaries; forgets records gone. Only flows
     * the programs reported: one whose first report was over the rate stays unreported (and counted lost),
     * so reports stay within the rate however many flows a flood makes.
     */
    private void sweep(Consumer<FlowReport> sink) {
        List<byte[][]> entries;
        try {
            entries = maps.flows().entries();
        } catch (ConcurrentModificationException | BpfException e) {
            return; // churning under a flood, or closed: the next sweep tries again
        }
        Map<ByteBuffer, Reported> seen = new HashMap<>();
        long mono = System.nanoTime();
        Instant wall = Instant.now();
        for (byte[][] kv : entries) {
            ByteBuffer key = ByteBuffer.wrap(kv[0]);
            if (!reported.containsKey(key)) {
                continue;
            }
            VerdictMaps.Key k = VerdictMaps.Key.decode(kv[0], 0);
            VerdictMaps.Record r = VerdictMaps.Record.decode(kv[1], 0, k.v6());
            Reported before = reported.get(key);
            if (r.first() != before.first()) {
                continue; // a record made anew whose first report was over the rate: unreported, as a new flow would be
            }
            if (r.packets() > before.packets()) {
                fromCounters.incrementAndGet();
                sink.accept(report(new VerdictMaps.Event(k, r), mono, wall));
            }
            seen.put(key, new Reported(r.first(), Math.max(r.packets(), before.packets())));
        }
        reported.clear();
        reported.putAll(seen);
    }

    /** A report, its kernel times (CLOCK_MONOTONIC, as System.nanoTime on Linux) turned into instants. */
    private static FlowReport report(VerdictMaps.Event e, long monoNow, Instant wallNow) {
        VerdictMaps.Key k = e.key();
        VerdictMaps.Record r = e.record();
        return new FlowReport(wallNow.minusNanos(monoNow - r.first()), wallNow.minusNanos(monoNow - r.last()), k.verdict(), k.reason(),
                k.direction(), r.reporter(), r.source(), r.destination(), k.protocol(), k.port(), r.service(), r.servicePort(), r.packets(),
                r.bytes(), r.first(), r.ref());
    }

    @Override
    public Map<String, Long> reported() {
        return Map.of("kernel", fromKernel.get(), "counters", fromCounters.get());
    }

    @Override
    public Map<String, Long> lost() {
        Map<String, Long> out = new TreeMap<>();
        if (maps == null) {
            return out;
        }
        try {
            out.put("rate", sum(VerdictMaps.LOST_RATE));
            out.put("buffer", sum(VerdictMaps.LOST_BUFFER));
        } catch (BpfException closed) {
            return Map.of();
        }
        return out;
    }

    private long sum(int index) {
        byte[] v = maps.lost().lookup(VerdictMaps.lostKey(index));
        return v == null ? 0 : VerdictMaps.sumPerCpu(v);
    }

    @Override
    public synchronized void close() {
        stopped = true;
        if (reader != null) {
            reader.interrupt();
            try {
                reader.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (ring != null) {
            ring.close();
        }
        if (maps != null) {
            maps.close();
        }
    }
}
