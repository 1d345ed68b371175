package io.npmagent.dataplane.flow;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A flow source whose reports are handed to it ({@link #report}) rather than read from a kernel: the fake
 * backend's, for testing what lies above the backends (the log, the agent's surfaces) with reports a
 * real kernel would make. Reports handed before {@link #start} or while reports are off are dropped,
 * as a kernel's would be.
 */
public final class ReplayedFlows implements FlowSource {
    private final AttributionRefs refs = new AttributionRefs();
    private final Map<String, AtomicLong> lost = new ConcurrentHashMap<>();
    private volatile Consumer<FlowReport> sink;
    private volatile FlowSettings settings = FlowSettings.OFF;

    @Override
    public AttributionRefs refs() {
        return refs;
    }

    @Override
    public void start(FlowSettings settings, Consumer<FlowReport> sink) {
        this.settings = settings;
        this.sink = sink;
    }

    @Override
    public void reconfigure(FlowSettings settings) {
        this.settings = settings;
    }

    /** Delivers a report as the kernel would, if the settings report its verdict. */
    public void report(FlowReport report) {
        Consumer<FlowReport> s = sink;
        boolean wanted = report.verdict() == FlowVerdict.DENIED ? settings.denied() : settings.allowed();
        if (s != null && wanted) {
            s.accept(report);
        }
    }

    /** Counts a report as lost, as a kernel over its rate would. */
    public void lose(String why) {
        lost.computeIfAbsent(why, w -> new AtomicLong()).incrementAndGet();
    }

    @Override
    public Map<String, Long> lost() {
        Map<String, Long> out = new java.util.TreeMap<>();
        lost.forEach((why, n) -> out.put(why, n.get()));
        return out;
    }
}
