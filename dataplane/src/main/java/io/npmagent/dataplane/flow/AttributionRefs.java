package io.npmagent.dataplane.flow;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The numbers a backend writes into the kernel beside a verdict (an eBPF map value, an NFLOG prefix), so
 * that a report of what the kernel did names what decided it as of the moment it decided. Interned: the
 * same {@link Attribution} always gets the same number, a different one never does, and a number never
 * changes meaning. A policy edited after a drop therefore cannot rewrite the drop's attribution: the
 * edit writes new numbers where its meaning changed (a rule renumbered, a pod isolated by another set
 * of policies), the old ones still decode to what they said.
 *
 * <p>Numbers start at 1; 0 is "none" (a kernel entry written by an agent before flows, or by a previous
 * run of this one, whose numbers this run does not know). Known limit: a number stays for the process's
 * life, so an attribution no longer written anywhere (a deleted policy's rules) still holds a few dozen
 * bytes until the agent restarts.
 *
 * <p>Thread-safe: backends render on the flush thread, flow readers decode on theirs.
 */
public final class AttributionRefs {
    /** The number meaning "none": nothing recorded, or not known to this run. */
    public static final int NONE = 0;

    private final Map<Attribution, Integer> numbers = new ConcurrentHashMap<>();
    private final Map<Integer, Attribution> meanings = new ConcurrentHashMap<>();
    private final AtomicInteger next = new AtomicInteger(1);

    /** The number of this attribution, allocated the first time it is asked for. */
    public int ref(Attribution attribution) {
        return numbers.computeIfAbsent(attribution, a -> {
            int n = next.getAndIncrement();
            if (n <= 0) {
                throw new IllegalStateException("attribution numbers exhausted");
            }
            meanings.put(n, a);
            return n;
        });
    }

    /** What a number means; empty for {@link #NONE} and for numbers this run never gave. */
    public Optional<Attribution> resolve(int ref) {
        return Optional.ofNullable(meanings.get(ref));
    }
}
