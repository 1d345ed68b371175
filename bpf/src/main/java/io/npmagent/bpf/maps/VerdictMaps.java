package io.npmagent.bpf.maps;

import io.npmagent.dataplane.flow.DropReason;
import io.npmagent.dataplane.flow.FlowSettings;
import io.npmagent.dataplane.flow.FlowVerdict;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import java.nio.ByteBuffer;

/**
 * The flow-verdict maps (verdicts.h): {@code npm_verdict_config} (what is reported), {@code npm_verdict_flows}
 * (a record per flow, an LRU), {@code npm_verdict_events} (the ring buffer of reports: a flow's key and its
 * record as they were), {@code npm_verdict_budget} and {@code npm_verdict_lost} (per CPU: the rate limit's
 * tokens, reports lost over the rate or to a full buffer).
 */
public final class VerdictMaps {
    public static final String CONFIG = "npm_verdict_config";
    public static final String FLOWS = "npm_verdict_flows";
    public static final String EVENTS = "npm_verdict_events";
    public static final String LOST = "npm_verdict_lost";
    public static final int CONFIG_SIZE = 16;
    public static final int KEY_SIZE = 28;
    public static final int RECORD_SIZE = 96;
    /**
     * struct npm_verdict_event: the key, then the record at the key's size rounded up to the record's
     * alignment (8). Only its size reaches the object's BTF, so the two parts' layouts are what is checked.
     */
    private static final int EVENT_RECORD_OFFSET = (KEY_SIZE + 7) / 8 * 8;
    public static final int EVENT_SIZE = EVENT_RECORD_OFFSET + RECORD_SIZE;
    /** npm_verdict_lost's indices. */
    public static final int LOST_RATE = 0;
    public static final int LOST_BUFFER = 1;
    private static final int REPORT_DENIED = 1;
    private static final int REPORT_ALLOWED = 2;
    private static final int FLOW_ALLOWED = 1;
    private static final String[] REPORTERS = {"?", "tc", "netfilter"};

    private VerdictMaps() {}

    /** struct npm_verdict_config for the settings (nothing reported when neither kind is on). */
    public static byte[] config(FlowSettings s) {
        int flags = (s.denied() ? REPORT_DENIED : 0) | (s.allowed() ? REPORT_ALLOWED : 0);
        return Bytes.writer(CONFIG_SIZE).putInt(flags).putInt(s.ratePerSecond()).putLong(s.interval().toNanos()).array();
    }

    /** struct npm_flow_key: the flow. {@code peer} is the destination for egress, the source for ingress. */
    public record Key(int endpoint, Direction direction, FlowVerdict verdict, DropReason reason, int protocol, boolean v6, int port,
            IpAddress peer) {
        public static Key decode(byte[] bytes, int offset) {
            ByteBuffer b = Bytes.reader(bytes, offset + KEY_SIZE).position(offset);
            int endpoint = b.getInt();
            Direction direction = (b.get() & 0xff) == 0 ? Direction.INGRESS : Direction.EGRESS;
            FlowVerdict verdict = (b.get() & 0xff) == FLOW_ALLOWED ? FlowVerdict.ALLOWED : FlowVerdict.DENIED;
            int reasonCode = b.get() & 0xff;
            int protocol = b.get() & 0xff;
            boolean v6 = (b.get() & 0xff) == 6;
            b.get();
            int port = Bytes.getPort(b);
            IpAddress peer = Bytes.getAddress(b, v6);
            DropReason reason = verdict == FlowVerdict.DENIED ? orPolicy(DropReason.ofCode(reasonCode)) : null;
            return new Key(endpoint, direction, verdict, reason, protocol, v6, port, peer);
        }

        /** A code this agent does not know is still a drop: named as policy's, the closest it can say. */
        private static DropReason orPolicy(DropReason r) {
            return r == null ? DropReason.POLICY : r;
        }
    }

    /** struct npm_flow_record: counts and times in bpf_ktime_get_ns() (CLOCK_MONOTONIC) nanoseconds. */
    public record Record(long first, long last, long packets, long bytes, long reported, int ref, String reporter, IpAddress source,
            IpAddress destination, IpAddress service, int servicePort) {
        public static Record decode(byte[] bytes, int offset, boolean v6) {
            ByteBuffer b = Bytes.reader(bytes, offset + RECORD_SIZE).position(offset);
            long first = b.getLong();
            long last = b.getLong();
            long packets = b.getLong();
            long bytesCount = b.getLong();
            long reported = b.getLong();
            int ref = b.getInt();
            int reporter = b.get() & 0xff;
            boolean hasService = b.get() != 0;
            int servicePort = Bytes.getPort(b);
            IpAddress source = Bytes.getAddress(b, v6);
            IpAddress destination = Bytes.getAddress(b, v6);
            IpAddress service = Bytes.getAddress(b, v6);
            return new Record(first, last, packets, bytesCount, reported, ref, reporter < REPORTERS.length ? REPORTERS[reporter] : "?",
                    source, destination, hasService ? service : null, hasService ? servicePort : 0);
        }
    }

    /** One ring buffer record: the flow and its record at the report. */
    public record Event(Key key, Record record) {
        public static Event decode(byte[] bytes) {
            if (bytes.length < EVENT_SIZE) {
                throw new IllegalArgumentException("a flow report is " + EVENT_SIZE + " bytes, got " + bytes.length);
            }
            Key key = Key.decode(bytes, 0);
            return new Event(key, Record.decode(bytes, EVENT_RECORD_OFFSET, key.v6()));
        }
    }

    /** npm_verdict_lost's per-CPU value (one u64 a CPU), summed. */
    public static long sumPerCpu(byte[] value) {
        ByteBuffer b = Bytes.reader(value, 0);
        long sum = 0;
        while (b.remaining() >= 8) {
            sum += b.getLong();
        }
        return sum;
    }

    /** The index of npm_verdict_lost as a key. */
    public static byte[] lostKey(int index) {
        return Bytes.writer(4).putInt(index).array();
    }

    /** npm_verdict_config's one key. */
    public static byte[] configKey() {
        return Bytes.writer(4).putInt(0).array();
    }
}
