package io.npmagent.iptables.nft;

import io.npmagent.dataplane.flow.Attribution;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.iptables.flow.FlowMarks;
import io.npmagent.iptables.model.Family;
import java.util.List;

/**
 * How a policy drop is written in nft: plainly, or (flows on) so that each flow's first packet is logged
 * with its attribution and every packet is counted per flow. With {@code C} the drop's own matches:
 * <pre>
 * C meta l4proto { tcp, udp, sctp } KEY != @flows_in4 limit rate N/second burst N packets log group 7731 snaplen 128 prefix "npm:D:I:12"
 * C meta l4proto { tcp, udp, sctp } update @flows_in4 { KEY } drop
 * C drop
 * </pre>
 * {@code KEY} is {@code ip saddr . ip daddr . meta l4proto . th dport}: the source port is not in it, so a
 * client's retries are one flow. The first rule logs only a packet whose flow has no element yet; the
 * second makes or refreshes the element (the set's {@code counter} counts the packet, its timeout starts
 * again) and drops. A set that is full refuses the element, and the third rule drops the packet
 * uncounted: a logging failure never changes a verdict. Protocols without ports (ICMP) reach the third
 * rule at once: dropped, not reported (README, known limits).
 */
public final class NftDrops {
    /** Drops written plainly: flows off, and tests of the chains' shape. */
    public static final NftDrops PLAIN = new NftDrops(null);

    private static final String PORTED = "meta l4proto { tcp, udp, sctp } ";
    private final FlowMarks marks;

    public NftDrops(FlowMarks marks) {
        this.marks = marks;
    }

    /** The set that holds a direction's flows in one family. */
    public static String flowSet(Direction d, Family f) {
        return "flows_" + (d == Direction.INGRESS ? "in" : "eg") + f.digit();
    }

    /** Whether {@code name} is one of the flow sets (elements the kernel makes, never compared or rewritten). */
    static boolean isFlowSet(String name) {
        return name.matches("flows_(in|eg)[46]");
    }

    /** The declaration of a flow set: dynamic, per-element counters and timeout, bounded. */
    static String flowSetDeclaration(Family f) {
        String addr = f == Family.IPV4 ? "ipv4_addr" : "ipv6_addr";
        return "{ type " + addr + " . " + addr + " . inet_proto . inet_service; flags dynamic,timeout; timeout "
                + FlowMarks.FLOW_TIMEOUT.toSeconds() + "s; size " + FlowMarks.MAX_FLOWS + "; counter; }";
    }

    /**
     * The rules of one drop: {@code condition} (matches, each followed by a space; may be empty) then drop,
     * as the class javadoc says. The attribution's number is given whether or not a log rule is written.
     */
    List<NftRules.Rule> drop(String condition, Direction d, Family f, Attribution attribution, String description) {
        if (marks == null) {
            return List.of(new NftRules.Rule(condition + "drop", description));
        }
        String prefix = marks.denied(d, attribution).text();
        if (!marks.logsDenied()) {
            return List.of(new NftRules.Rule(condition + "drop", description));
        }
        String ip = f == Family.IPV4 ? "ip" : "ip6";
        String key = ip + " saddr . " + ip + " daddr . meta l4proto . th dport";
        String set = "@" + flowSet(d, f);
        int rate = marks.ratePerSecond();
        return List.of(
                new NftRules.Rule(condition + PORTED + key + " != " + set + " limit rate " + rate + "/second burst " + rate + " packets log group "
                        + FlowMarks.NFLOG_GROUP + " snaplen " + FlowMarks.SNAPLEN + " prefix \"" + prefix + "\"", "log first: " + description),
                new NftRules.Rule(condition + PORTED + "update " + set + " { " + key + " } drop", "count: " + description),
                new NftRules.Rule(condition + "drop", description));
    }
}
