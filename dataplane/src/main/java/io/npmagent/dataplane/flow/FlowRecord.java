package io.npmagent.dataplane.flow;

import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import java.time.Instant;
import java.util.Objects;

/**
 * One flow as every surface shows it ({@code npm-agent flows}, {@code /debug/flows}, {@code sandbox flows}):
 * the event of the flow-verdicts schema. Attribution is what the kernel's verdict read, resolved when the
 * flow's first report arrived; {@code nearest} (default denies only) is the rule of an isolating policy
 * that came closest, found then too.
 *
 * @param first       the flow's first packet
 * @param last        its latest packet reported
 * @param node        the node whose kernel decided
 * @param backend     {@code bpf}, {@code nft}, {@code iptables-nft}, {@code iptables-legacy}
 * @param reason      why dropped; null when allowed
 * @param reporter    the hook that decided ({@link FlowReport#reporter()})
 * @param protocol    {@code TCP}, {@code UDP}, {@code SCTP}, {@code ICMP}, {@code ICMPv6}, else the number
 * @param service     the destination before DNAT (a Service's address and port), or null
 * @param reports     how many reports the kernel sent for it (the first packet, then summaries)
 * @param attribution what decided; null when the kernel's reference is unknown to this run
 * @param nearest     for a default deny, the nearest rule that almost matched, with what it missed; else null
 */
public record FlowRecord(
        Instant first,
        Instant last,
        String node,
        String backend,
        FlowVerdict verdict,
        DropReason reason,
        Direction direction,
        String reporter,
        String family,
        String protocol,
        Peer source,
        Peer destination,
        int port,
        Service service,
        long packets,
        long bytes,
        long reports,
        Attribution attribution,
        String nearest) {

    public FlowRecord {
        Objects.requireNonNull(first, "first");
        Objects.requireNonNull(verdict, "verdict");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(destination, "destination");
    }

    /** One end: its address and, when it is a pod this agent knows, the pod. */
    public record Peer(IpAddress address, PodKey pod) {
        @Override
        public String toString() {
            return pod == null ? address.toString() : pod + "(" + address + ")";
        }
    }

    /** The address and port the client connected to, before kube-proxy's DNAT. */
    public record Service(IpAddress address, int port) {
        @Override
        public String toString() {
            return (address.v6() ? "[" + address + "]" : address.toString()) + ":" + port;
        }
    }

    /** The attribution for people, or why there is none. */
    public String attributionText() {
        return attribution == null ? "unknown (decided by state this run did not write)" : attribution.text();
    }

    /** One line: {@code 2026-12-07T00:40:01Z DENIED(policy) ingress TCP x/a(10.244.0.5) -> y/b(10.244.0.6):80 packets=3 ... by ...}. */
    public String line() {
        StringBuilder b = new StringBuilder();
        b.append(last).append(' ').append(verdict).append(reason == null ? "" : "(" + reason.label() + ")").append(' ')
                .append(direction.apiName().toLowerCase()).append(' ').append(protocol).append(' ')
                .append(source).append(" -> ").append(destination).append(port == 0 ? "" : ":" + port);
        if (service != null) {
            b.append(" via ").append(service);
        }
        b.append(" packets=").append(packets).append(" bytes=").append(bytes).append(" since=").append(first)
                .append(" by ").append(attributionText());
        if (nearest != null) {
            b.append("; nearest: ").append(nearest);
        }
        return b.toString();
    }

    /** The IP protocol's name as flows print it. */
    public static String protocolName(int number) {
        return switch (number) {
            case 1 -> "ICMP";
            case 6 -> "TCP";
            case 17 -> "UDP";
            case 58 -> "ICMPv6";
            case 132 -> "SCTP";
            default -> Integer.toString(number);
        };
    }
}
