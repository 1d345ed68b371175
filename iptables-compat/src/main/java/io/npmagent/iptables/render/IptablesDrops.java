package io.npmagent.iptables.render;

import io.npmagent.dataplane.flow.Attribution;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.iptables.flow.FlowMarks;
import io.npmagent.iptables.ipset.IpsetFlowSets;
import io.npmagent.iptables.model.Family;
import java.util.List;

/**
 * How a policy drop is written in iptables: plainly, or (flows on) so that each flow's first packet is
 * logged with its attribution and every packet is counted per flow. With {@code C} the drop's own matches
 * and {@code S} the direction's and family's flow set ({@link IpsetFlowSets}):
 * <pre>
 * C -m set --match-set S src,dst,dst -j DROP
 * C ! -p icmp -j SET --add-set S src,dst,dst
 * C ! -p icmp -m limit --limit N/sec --limit-burst N -j NFLOG --nflog-group 7731 --nflog-prefix npm:D:I:12 --nflog-size 128
 * C -j DROP
 * </pre>
 * The first rule drops a packet whose flow has an element; the set match adds it to the element's
 * counters. Otherwise the packet is a flow's first: the second rule makes its element (the kernel counts
 * the packet that made it: packets 1, its bytes), the third logs it within the rate and the fourth drops
 * it. A set that is full takes no element: then the packet is logged (within the rate) and dropped
 * uncounted, and so is each later one of that flow. Nothing here can let a packet through: SET and NFLOG
 * never end a chain, and every path ends in DROP (a logging or set failure never changes a verdict).
 *
 * <p>No refresh: a re-add ({@code --exist}) would restart the element's timeout but also set its counters
 * back to the one packet, so an element lives {@link FlowMarks#FLOW_TIMEOUT} from its flow's first packet
 * and a flow that goes on is a new record (logged again) after that.
 *
 * <p>ICMP ({@code ipv6-icmp} in IPv6) is dropped unlogged and uncounted, as on nft: the set would key it
 * by type and code, which are not a port. A condition that names its protocol already (a Deny rule with a
 * port, always TCP, UDP or SCTP) needs no {@code ! -p} (iptables takes one {@code -p}).
 */
public final class IptablesDrops {
    /** Drops written plainly: flows off, and tests of the chains' shape. */
    public static final IptablesDrops PLAIN = new IptablesDrops(null);
    /** iptables' {@code limit} takes at most 10,000 a second and a burst of 10,000. */
    static final int MAX_RATE = 10_000;

    private final FlowMarks marks;

    public IptablesDrops(FlowMarks marks) {
        this.marks = marks;
    }

    /**
     * The rules of one drop: {@code condition} (matches, each followed by a space; may be empty) then DROP,
     * as the class javadoc says. The attribution's number is given whether or not a log rule is written.
     *
     * @param protocolNamed whether {@code condition} has a {@code -p} of its own
     */
    List<IptablesRules.Rule> drop(String condition, boolean protocolNamed, Direction d, Family f, Attribution attribution,
            String description) {
        if (marks == null) {
            return List.of(new IptablesRules.Rule(condition + "-j DROP", description));
        }
        String prefix = marks.denied(d, attribution).text();
        if (!marks.logsDenied()) {
            return List.of(new IptablesRules.Rule(condition + "-j DROP", description));
        }
        String key = "--match-set " + IpsetFlowSets.name(d, f) + " src,dst,dst";
        String ported = condition + (protocolNamed ? "" : f == Family.IPV4 ? "! -p icmp " : "! -p ipv6-icmp ");
        int rate = Math.min(marks.ratePerSecond(), MAX_RATE);
        return List.of(
                new IptablesRules.Rule(condition + "-m set " + key + " -j DROP", "count: " + description),
                new IptablesRules.Rule(ported + "-j SET --add-set " + IpsetFlowSets.name(d, f) + " src,dst,dst", "record: " + description),
                new IptablesRules.Rule(ported + "-m limit --limit " + rate + "/sec --limit-burst " + rate + " -j NFLOG --nflog-group "
                        + FlowMarks.NFLOG_GROUP + " --nflog-prefix " + prefix + " --nflog-size " + FlowMarks.SNAPLEN, "log first: " + description),
                new IptablesRules.Rule(condition + "-j DROP", description));
    }
}
