package io.npmagent.iptables.flow;

import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The agent's view of the kernel's flow records (set elements), which carry no identity of their own:
 * which record ({@code instance}) a report is about, the attribution number its first packet's log
 * carried (the sets hold counters, not numbers), and the counts last reported. A logged first packet
 * means the kernel made a new record; a read-back element whose counters went down, or that was not
 * known, is a new record too (then its first packet's log was lost: to the rate limit, or to the socket's
 * buffer).
 *
 * <p>Thread-safe: the NFLOG thread and the counters thread both use it.
 */
final class FlowInstances {
    /** A flow as the sets key it (a client's retries from new source ports are one). */
    record Key(Direction direction, IpAddress source, IpAddress destination, int protocol, int port) {}

    /**
     * One record: its instance, whether its first packet's log arrived ({@code announced}), the number the log
     * carried (0 if not logged), when it began, what was last reported.
     */
    static final class Entry {
        final long instance;
        final boolean announced;
        final int ref;
        final Instant first;
        long packets;
        long bytes;
        long touched;

        Entry(long instance, boolean announced, int ref, Instant first) {
            this.instance = instance;
            this.announced = announced;
            this.ref = ref;
            this.first = first;
        }
    }

    /** What a read-back element means: its record, and whether the record is one no log announced. */
    record Counted(Entry entry, boolean unannounced, boolean changed) {}

    private final AtomicLong instances = new AtomicLong();
    private final Map<Key, Entry> entries = new HashMap<>();

    /** A first packet was logged: a new record. */
    synchronized Entry logged(Key key, int ref, Instant at, long bytes, long now) {
        Entry e = new Entry(instances.incrementAndGet(), true, ref, at);
        e.packets = 1;
        e.bytes = bytes;
        e.touched = now;
        entries.put(key, e);
        return e;
    }

    /** A read-back element: the same record if its counters did not go down, else a new one. */
    synchronized Counted counted(Key key, long packets, long bytes, Instant firstIfNew, long now) {
        Entry e = entries.get(key);
        boolean unannounced = false;
        if (e == null || packets < e.packets) {
            e = new Entry(instances.incrementAndGet(), false, 0, firstIfNew);
            entries.put(key, e);
            unannounced = true;
        }
        boolean changed = unannounced || packets != e.packets || bytes != e.bytes;
        e.packets = packets;
        e.bytes = bytes;
        e.touched = now;
        return new Counted(e, unannounced, changed);
    }

    /** Forgets records the latest read did not list, unless touched since it began (a log that raced it). */
    synchronized void retain(Set<Key> listed, long readStarted) {
        entries.entrySet().removeIf(en -> !listed.contains(en.getKey()) && en.getValue().touched < readStarted);
    }

    synchronized int size() {
        return entries.size();
    }
}
