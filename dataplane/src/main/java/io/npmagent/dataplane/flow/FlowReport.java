package io.npmagent.dataplane.flow;

import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import java.time.Instant;
import java.util.Objects;

/**
 * One report of one flow, as a backend read it from its kernel: its first packet, or a summary since.
 * The kernel keeps a record per flow (eBPF: an LRU map entry; netfilter: a set element with a timeout)
 * and counts its packets there; {@code packets} and {@code bytes} are that record's totals so far, and
 * {@code instance} tells records apart (a record evicted or expired and made anew counts from zero again).
 *
 * @param first          the flow record's first packet
 * @param last           its latest packet
 * @param reason         why it was dropped; null when allowed
 * @param reporter       where the verdict was made: {@code tc}, {@code netfilter} (eBPF's forward hook), {@code nflog}
 * @param protocol       the IP protocol number
 * @param port           the destination port (0 for protocols without ports)
 * @param service        the destination before kube-proxy's DNAT, when DNAT changed it (a Service's
 *                       address); null otherwise
 * @param servicePort    its port, 0 with no service
 * @param instance       the kernel's record of the flow: the same value for every report of one record
 * @param ref            the attribution reference the verdict read ({@link AttributionRefs}), 0 for none
 */
public record FlowReport(
        Instant first,
        Instant last,
        FlowVerdict verdict,
        DropReason reason,
        Direction direction,
        String reporter,
        IpAddress source,
        IpAddress destination,
        int protocol,
        int port,
        IpAddress service,
        int servicePort,
        long packets,
        long bytes,
        long instance,
        int ref) {

    public FlowReport {
        Objects.requireNonNull(first, "first");
        Objects.requireNonNull(last, "last");
        Objects.requireNonNull(verdict, "verdict");
        Objects.requireNonNull(direction, "direction");
        Objects.requireNonNull(reporter, "reporter");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(destination, "destination");
        if ((verdict == FlowVerdict.DENIED) != (reason != null)) {
            throw new IllegalArgumentException("a reason exactly when denied");
        }
    }

    /** The flow this reports on: what one client's retries from new source ports have in common. */
    public FlowKey key() {
        return new FlowKey(direction, verdict, reason, source, destination, protocol, port);
    }

    /**
     * A flow: source, destination, its port and protocol, the direction judged, and what the kernel did
     * (a flow denied and later allowed, after a policy change, is two).
     */
    public record FlowKey(Direction direction, FlowVerdict verdict, DropReason reason, IpAddress source, IpAddress destination,
            int protocol, int port) {}
}
