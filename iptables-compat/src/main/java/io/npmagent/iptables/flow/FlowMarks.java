package io.npmagent.iptables.flow;

import io.npmagent.dataplane.flow.Attribution;
import io.npmagent.dataplane.flow.AttributionRefs;
import io.npmagent.dataplane.flow.FlowSettings;
import io.npmagent.dataplane.flow.FlowVerdict;
import io.npmagent.dataplane.model.Direction;
import java.time.Duration;

/**
 * What rendering writes beside a policy drop so that the drop can be reported: the attribution's number
 * ({@link AttributionRefs}, one per backend instance) in an NFLOG prefix ({@link FlowPrefix}), the log
 * group, the rate, and the per-flow sets that keep repeats from being logged.
 *
 * <p><b>Before and after start.</b> From the first render on, every policy drop logs its first packet
 * per flow (the {@code Backend} contract: references are written with every verdict whether or not
 * reports are started); until a reader binds the group the kernel discards the messages (NFLOG with no
 * listener is inert), and the sets merely count. {@link #configure} with settings that turn denied
 * flows off renders the drops plain again (no log rules, no sets touched); the backend re-renders when
 * what is rendered changes. Attribution numbers are given at render time in either case, so a number
 * means the same whenever it is read.
 *
 * <p>Thread-safe: the flush thread renders, the flow source's {@code start} configures.
 */
public final class FlowMarks {
    /**
     * The NFLOG group every log rule of the agent writes to, and the reader binds: one number, fixed, so
     * a restarted agent reads what the rules of its previous run log. ulogd and most tools default to 0
     * and 1; pick another with care, as a group has one reader.
     */
    public static final int NFLOG_GROUP = 7731;
    /** How many bytes of a logged packet are copied: its IP and transport headers, never the data. */
    public static final int SNAPLEN = 128;
    /** How long a flow's record (a set element) lives after its latest packet. */
    public static final Duration FLOW_TIMEOUT = Duration.ofSeconds(30);
    /** The most flows a set (one per direction and family) holds; a flow beyond is dropped all the same, uncounted. */
    public static final int MAX_FLOWS = 65536;

    private final AttributionRefs refs;
    private volatile FlowSettings settings = FlowSettings.DEFAULT;

    public FlowMarks(AttributionRefs refs) {
        this.refs = refs;
    }

    public AttributionRefs refs() {
        return refs;
    }

    /** Whether policy drops log their flows' first packets. */
    public boolean logsDenied() {
        return settings.denied();
    }

    /** Log messages a second a log rule may send (each rule its own token bucket; the burst is as many). */
    public int ratePerSecond() {
        return settings.ratePerSecond();
    }

    /** The prefix of a drop's log rule: the attribution's number, given now if it has none yet. */
    public FlowPrefix denied(Direction direction, Attribution attribution) {
        return new FlowPrefix(FlowVerdict.DENIED, direction, refs.ref(attribution));
    }

    /**
     * Takes the settings reports start with; returns whether what is rendered changes (denied flows on or
     * off, another rate), so that the caller re-renders.
     */
    public boolean configure(FlowSettings next) {
        FlowSettings was = settings;
        settings = next;
        return was.denied() != next.denied() || (next.denied() && was.ratePerSecond() != next.ratePerSecond());
    }
}
