package io.npmagent.dataplane.flow;

import java.util.Map;
import java.util.function.Consumer;

/**
 * A backend's flow verdicts: its kernel's reports, read on a thread of the source's own and handed to a
 * sink ({@link FlowLog#record}), and the {@link AttributionRefs} its kernel state was written with, which
 * decode them. Reading never slows the datapath: what the reader cannot take in time is counted lost.
 */
public interface FlowSource extends AutoCloseable {
    /** A backend without flow verdicts (the fake one). */
    FlowSource NONE = new FlowSource() {
        @Override
        public AttributionRefs refs() {
            return new AttributionRefs();
        }

        @Override
        public void start(FlowSettings settings, Consumer<FlowReport> sink) {}

        @Override
        public void reconfigure(FlowSettings settings) {}

        @Override
        public Map<String, Long> lost() {
            return Map.of();
        }
    };

    /** The numbers the backend writes beside its verdicts. */
    AttributionRefs refs();

    /** Starts reporting as the settings say, until closed; called at most once. */
    void start(FlowSettings settings, Consumer<FlowReport> sink);

    /**
     * After {@link #start}: reports as {@code settings} say from now on, to the same sink (the configuration's
     * {@code Flows} changed while the agent runs). The kernel is told before this returns. Verdicts never wait
     * for it: only what is reported changes.
     */
    void reconfigure(FlowSettings settings);

    /** Reports lost since start, per why ({@code rate}, {@code buffer}, {@code evicted}). */
    Map<String, Long> lost();

    /**
     * Reports handed to the sink since start, per where they came from: {@code kernel}, the kernel's own
     * (ring buffer records, NFLOG messages: what the rate bounds), and {@code counters}, summaries the reader
     * made from the flows' counters (no kernel message each).
     */
    default Map<String, Long> reported() {
        return Map.of();
    }

    @Override
    default void close() {}
}
