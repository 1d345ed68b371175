package io.npmagent.pipelines.upstream;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The replies the node's kernel saw, from {@code conntrack -E -e UPDATE -o timestamp} in the node's network
 * namespace: a flow's UPDATE event with a TCP state of SYN_RECV or ESTABLISHED (the destination answered the
 * SYN), or any UDP UPDATE (conntrack marks a UDP flow when the first reply passes), keyed by the pod that sent
 * it and the pod and port that answered (the reply tuple, after kube-proxy's DNAT).
 *
 * <p>Why this is evidence: the probes of upstream's suites go through kube-proxy's DNAT on the node, where
 * conntrack sees both directions whatever the backend. A request the agent dropped is never answered (the SYN or
 * datagram dies on the way to the pod, so no reply passes), so "a reply was seen" means the dataplane let the
 * request through, and its absence that it did not, independently of what the probe's exec reported.
 */
final class ConntrackReplies {
    private static final Pattern EVENT = Pattern.compile("^\\[(\\d+)\\.(\\d+)\\]\\s+\\[UPDATE\\]\\s+(tcp|udp)\\s+\\d+\\s+\\d+\\s+"
            + "(?:([A-Z_0-9]+)\\s+)?src=(\\S+) dst=\\S+ sport=\\d+ dport=\\d+ src=(\\S+) dst=\\S+ sport=(\\d+) dport=\\d+");

    /** A reply: PROTOCOL ("tcp", "udp") from the pod at {@code from} to the one at {@code to}, answered from {@code port}. */
    record Flow(String protocol, String from, String to, int port) {}

    private final Map<Flow, List<Instant>> replies;
    private final Instant first;
    private final Instant last;
    private final String endedEarly;

    private ConntrackReplies(Map<Flow, List<Instant>> replies, Instant first, Instant last, String endedEarly) {
        this.replies = replies;
        this.first = first;
        this.last = last;
        this.endedEarly = endedEarly;
    }

    static ConntrackReplies parse(List<String> lines) {
        Map<Flow, List<Instant>> replies = new HashMap<>();
        Instant first = null;
        Instant last = null;
        for (String line : lines) {
            Matcher m = EVENT.matcher(line);
            if (!m.find()) {
                continue;
            }
            String fraction = (m.group(2) + "000000000").substring(0, 9);
            Instant at = Instant.ofEpochSecond(Long.parseLong(m.group(1)), Long.parseLong(fraction));
            first = first == null || at.isBefore(first) ? at : first;
            last = last == null || at.isAfter(last) ? at : last;
            String protocol = m.group(3);
            String state = m.group(4);
            if (protocol.equals("tcp") && !"SYN_RECV".equals(state) && !"ESTABLISHED".equals(state)) {
                continue;
            }
            replies.computeIfAbsent(new Flow(protocol, m.group(5), m.group(6), Integer.parseInt(m.group(7))), k -> new ArrayList<>())
                    .add(at);
        }
        return new ConntrackReplies(replies, first, last, null);
    }

    /**
     * The same capture, known to have ended before the run did (WHY: how it ended, in its own words): after its
     * last event it says nothing, so a try that ends later has no evidence rather than "no reply".
     */
    ConntrackReplies endedEarly(String why) {
        return new ConntrackReplies(replies, first, last, why);
    }

    /** How the capture ended before the run did, or null when it ran to the run's end. */
    String ended() {
        return endedEarly;
    }

    /** When the capture's first event came, or null when it has none: before it, the capture says nothing. */
    Instant first() {
        return first;
    }

    /** Whether the capture covers FROM to TO: it began before FROM and, if it ended early, its last event is after TO. */
    boolean covers(Instant from, Instant to) {
        return first != null && !from.isBefore(first) && (endedEarly == null || !to.isAfter(last));
    }

    /** Whether a reply of FLOW passed between FROM and TO (both inclusive). */
    boolean replied(Flow flow, Instant from, Instant to) {
        for (Instant at : replies.getOrDefault(flow, List.of())) {
            if (!at.isBefore(from) && !at.isAfter(to)) {
                return true;
            }
        }
        return false;
    }
}
