package io.npmagent.iptables.flow;

import io.npmagent.dataplane.flow.AttributionRefs;
import io.npmagent.dataplane.flow.DropReason;
import io.npmagent.dataplane.flow.FlowReport;
import io.npmagent.dataplane.flow.FlowSettings;
import io.npmagent.dataplane.flow.FlowSource;
import io.npmagent.dataplane.flow.FlowVerdict;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The netfilter backends' flow verdicts: the first packet of each denied flow, read from NFLOG
 * ({@link FlowMarks#NFLOG_GROUP}) on a daemon thread of its own, and every {@link FlowSettings#interval}
 * a summary of each flow whose counters moved, read from the flow sets ({@link FlowCounters}) on a
 * second one. Each becomes a {@link FlowReport} (reporter {@code nflog}) for the sink.
 *
 * <p><b>Never fails open.</b> Nothing here takes part in a verdict: the drop rules drop whether or not
 * logging, the sets or this reader work. A reader that cannot bind its group, or dies, is logged and
 * stops reporting; the drops stay.
 *
 * <p><b>Losses</b> ({@link #lost}): {@code rate}, flows whose record appeared with no log of its first
 * packet (over the log rule's limit; a socket overrun loses such logs too), which are counted and never
 * reported, so reports stay within the rate however many flows a flood makes; {@code buffer}, overruns of
 * the socket's buffer ({@code ENOBUFS}: one or more messages each); {@code evicted}, reads that found a
 * flow set full (flows beyond it are dropped uncounted, as is the kernel's choice).
 *
 * <p><b>Namespace.</b> The socket belongs to the namespace of the thread that opens it: the agent's
 * (the node's) unless {@link #inNamespace} names another, which the reading thread enters first
 * (kernel tests read their test namespace's node this way).
 */
public final class NetfilterFlows implements FlowSource {
    private static final System.Logger LOG = System.getLogger(NetfilterFlows.class.getName());
    static final String REPORTER = "nflog";
    private static final int BUFFER_BYTES = 4 << 20;
    private static final int POLL_MILLIS = 200;

    private final String backend;
    private final FlowMarks marks;
    private final FlowCounters counters;
    /** Re-renders the backend's chains (its reconcile), when {@link FlowMarks#configure} says they change. */
    private final Runnable rerender;
    private final FlowInstances instances = new FlowInstances();
    private final Map<String, AtomicLong> lost = new ConcurrentHashMap<>();
    private final AtomicLong logged = new AtomicLong();
    private final AtomicLong summarised = new AtomicLong();
    private volatile String netnsFile;
    /** How often the flow sets are read: the settings' interval, as last configured. */
    private volatile Duration interval = FlowSettings.DEFAULT.interval();
    private Consumer<FlowReport> sink;
    private volatile boolean closed;
    private Thread nflog;
    private Thread summaries;

    public NetfilterFlows(String backend, FlowMarks marks, FlowCounters counters, Runnable rerender) {
        this.backend = backend;
        this.marks = marks;
        this.counters = counters;
        this.rerender = rerender;
        for (String why : new String[] {"rate", "buffer", "evicted"}) {
            lost.put(why, new AtomicLong());
        }
    }

    /** Reads in the network namespace {@code ip netns} named so (/run/netns/NAME), not the caller's; before {@link #start}. */
    public NetfilterFlows inNamespace(String netnsName) {
        if (netnsName.isEmpty() || netnsName.contains("/")) {
            throw new IllegalArgumentException("not a network namespace name: '" + netnsName + "'");
        }
        this.netnsFile = "/run/netns/" + netnsName;
        return this;
    }

    @Override
    public AttributionRefs refs() {
        return marks.refs();
    }

    /**
     * Renders the drops as {@code settings} say (re-rendering the backend's chains if that changes them),
     * then, if denied flows are on, binds the NFLOG group and starts reading; returns once bound (a
     * refusal to bind throws, with the drops rendered and in force).
     */
    @Override
    public synchronized void start(FlowSettings settings, Consumer<FlowReport> sink) {
        if (this.sink != null) {
            throw new IllegalStateException("flow source of " + backend + " already started");
        }
        this.sink = sink;
        reconfigure(settings);
    }

    /**
     * As {@link #start} does, for settings that changed while the agent runs: the chains re-rendered when
     * what is rendered changes (denied flows on or off, another rate), before this returns; the reader
     * started if denied flows are on and it was not. A reader once started stays: with the log rules gone
     * it receives nothing, and the counters are not read while denied flows are off.
     */
    @Override
    public synchronized void reconfigure(FlowSettings settings) {
        if (sink == null || closed) {
            return;
        }
        interval = settings.interval();
        if (marks.configure(settings)) {
            rerender.run();
        }
        if (!settings.denied() || nflog != null) {
            return; // allowed flows alone are not reported by the netfilter backends (README, known limits)
        }
        Consumer<FlowReport> to = sink;
        CountDownLatch bound = new CountDownLatch(1);
        RuntimeException[] failure = new RuntimeException[1];
        nflog = new Thread(() -> readLogs(to, bound, failure), "nflog-" + backend);
        nflog.setDaemon(true);
        nflog.start();
        try {
            bound.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (failure[0] != null) {
            throw failure[0];
        }
        summaries = new Thread(() -> readCounters(to), "flow-counters-" + backend);
        summaries.setDaemon(true);
        summaries.start();
    }

    private void readLogs(Consumer<FlowReport> sink, CountDownLatch bound, RuntimeException[] failure) {
        NflogSocket socket;
        try {
            if (netnsFile != null) {
                NetlinkLibC.enterNetns(netnsFile);
            }
            socket = NflogSocket.open(FlowMarks.NFLOG_GROUP, FlowMarks.SNAPLEN, BUFFER_BYTES, POLL_MILLIS);
        } catch (RuntimeException | LinkageError e) {
            failure[0] = e instanceof RuntimeException r ? r : new IllegalStateException("cannot load libc for NFLOG", e);
            bound.countDown();
            return;
        }
        bound.countDown();
        byte[] buf = new byte[1 << 16];
        try (socket) {
            while (!closed) {
                int n = socket.receive(buf);
                if (n == NflogSocket.OVERRUN) {
                    lost.get("buffer").incrementAndGet();
                } else if (n > 0) {
                    deliver(NflogMessages.parse(buf, n), sink);
                }
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "{0}: the NFLOG reader stopped ({1}); drops go on, unreported", backend, e.getMessage());
        }
    }

    private void deliver(NflogMessages.Batch batch, Consumer<FlowReport> sink) {
        for (NflogMessages.Packet p : batch.packets()) {
            try {
                FlowReport report = firstPacket(p, System.nanoTime());
                logged.incrementAndGet();
                sink.accept(report);
            } catch (IllegalArgumentException e) {
                LOG.log(System.Logger.Level.DEBUG, "{0}: skipped an NFLOG message: {1}", backend, e.getMessage());
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "{0}: the flow sink failed: {1}", backend, e.toString());
            }
        }
    }

    /** A logged packet as a report: the flow's first packet, a new kernel record. */
    FlowReport firstPacket(NflogMessages.Packet p, long now) {
        FlowPrefix prefix = FlowPrefix.parse(p.prefix());
        PacketHeader h = PacketHeader.parse(p.payload());
        Instant at = p.timestamp() != null ? p.timestamp() : Instant.now();
        FlowInstances.Key key = new FlowInstances.Key(prefix.direction(), h.source(), h.destination(), h.protocol(), h.port());
        FlowInstances.Entry e = instances.logged(key, prefix.ref(), at, h.length(), now);
        return new FlowReport(at, at, prefix.verdict(), reason(prefix.verdict()), prefix.direction(), REPORTER, h.source(),
                h.destination(), h.protocol(), h.port(), null, 0, 1, h.length(), e.instance, prefix.ref());
    }

    private static DropReason reason(FlowVerdict v) {
        return v == FlowVerdict.DENIED ? DropReason.POLICY : null;
    }

    private void readCounters(Consumer<FlowReport> sink) {
        while (!closed) {
            try {
                Thread.sleep(interval.toMillis());
            } catch (InterruptedException e) {
                if (closed) {
                    return;
                }
            }
            if (closed) {
                return;
            }
            if (!marks.logsDenied()) {
                continue; // turned off: the drops are rendered plain, no set counts
            }
            try {
                summarise(sink);
            } catch (RuntimeException e) {
                if (!closed) { // a read that close() interrupted is no failure
                    LOG.log(System.Logger.Level.WARNING, "{0}: cannot read the flow counters: {1}", backend, e.getMessage());
                }
            }
        }
    }

    /** Reads every flow set once and reports each flow whose counters moved. Also what {@link #readCountersNow} runs. */
    void summarise(Consumer<FlowReport> sink) {
        long started = System.nanoTime();
        Instant now = Instant.now();
        CountedFlow.Reading reading = counters.read();
        lost.get("evicted").addAndGet(reading.fullSets());
        Set<FlowInstances.Key> listed = new HashSet<>();
        for (CountedFlow c : reading.flows()) {
            FlowInstances.Key key = new FlowInstances.Key(c.direction(), c.source(), c.destination(), c.protocol(), c.port());
            listed.add(key);
            Instant last = c.expires() == null ? now : now.minus(FlowMarks.FLOW_TIMEOUT.minus(c.expires()));
            if (last.isAfter(now)) {
                last = now;
            }
            FlowInstances.Counted counted = instances.counted(key, c.packets(), c.bytes(), last, System.nanoTime());
            if (counted.unannounced()) {
                lost.get("rate").incrementAndGet();
            }
            FlowInstances.Entry e = counted.entry();
            if (!counted.changed() || !e.announced) {
                continue; // unannounced: over the rate, counted lost and never reported, so reports stay within the rate
            }
            Instant first = e.first.isAfter(last) ? last : e.first;
            summarised.incrementAndGet();
            try {
                sink.accept(new FlowReport(first, last, FlowVerdict.DENIED, DropReason.POLICY, c.direction(), REPORTER, c.source(),
                        c.destination(), c.protocol(), c.port(), null, 0, c.packets(), c.bytes(), e.instance, e.ref));
            } catch (RuntimeException ex) {
                LOG.log(System.Logger.Level.WARNING, "{0}: the flow sink failed: {1}", backend, ex.toString());
            }
        }
        instances.retain(listed, started);
    }

    /** Reads the counters now rather than at the next interval (tests, and a reader that wants a fresh view). */
    public void readCountersNow(Consumer<FlowReport> sink) {
        summarise(sink);
    }

    @Override
    public Map<String, Long> reported() {
        return Map.of("kernel", logged.get(), "counters", summarised.get());
    }

    @Override
    public Map<String, Long> lost() {
        Map<String, Long> out = new TreeMap<>();
        lost.forEach((why, n) -> out.put(why, n.get()));
        return out;
    }

    /** Stops both threads; the socket closes with the NFLOG thread (within its poll interval). */
    @Override
    public void close() {
        closed = true;
        for (Thread t : new Thread[] {nflog, summaries}) {
            if (t != null) {
                t.interrupt();
                try {
                    t.join(2000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }
}
