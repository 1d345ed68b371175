package io.npmagent.iptables.ipset;

import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.iptables.flow.CountedFlow;
import io.npmagent.iptables.flow.FlowMarks;
import io.npmagent.iptables.model.Family;
import io.npmagent.iptables.model.Names;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The iptables backends' flow sets: one {@code hash:ip,port,ip} per direction and family
 * ({@code npm-flows-in4}, {@code npm-flows-eg6}, ...), keyed {@code source, protocol:destination port,
 * destination} (no source port: a client's retries are one flow), with a timeout and per-element counters.
 * The kernel fills them ({@code -j SET --add-set}); the agent only creates, reads and destroys them, so
 * {@link IpsetTable} (which compares and rewrites the agent's other sets) leaves them alone.
 *
 * <p>Their names cannot be a hashed set's: those are {@code npm-} then a kind letter {@code s}, {@code c}
 * or {@code n} and a family digit ({@link Names#ipset}).
 */
public final class IpsetFlowSets {
    private IpsetFlowSets() {}

    /** The set that holds a direction's flows in one family. */
    public static String name(Direction d, Family f) {
        return Names.SET_PREFIX + "flows-" + (d == Direction.INGRESS ? "in" : "eg") + f.digit();
    }

    /** Whether {@code name} is one of the flow sets. */
    public static boolean isFlowSet(String name) {
        return name.matches("npm-flows-(in|eg)[46]");
    }

    /** All four names. */
    public static Set<String> names() {
        Set<String> out = new TreeSet<>();
        for (Direction d : Direction.values()) {
            for (Family f : Family.values()) {
                out.add(name(d, f));
            }
        }
        return out;
    }

    /**
     * {@code ipset restore} input that creates every flow set not in {@code present}, each
     * {@code hash:ip,port,ip} with {@link FlowMarks#FLOW_TIMEOUT}, {@code counters} and
     * {@link FlowMarks#MAX_FLOWS} elements at most. {@code -exist}: a set made meanwhile is no error.
     */
    public static String createInput(Set<String> present) {
        StringBuilder out = new StringBuilder();
        for (Direction d : Direction.values()) {
            for (Family f : Family.values()) {
                String name = name(d, f);
                if (!present.contains(name)) {
                    out.append("create ").append(name).append(" hash:ip,port,ip family ").append(f == Family.IPV4 ? "inet" : "inet6")
                            .append(" timeout ").append(FlowMarks.FLOW_TIMEOUT.toSeconds()).append(" counters maxelem ")
                            .append(FlowMarks.MAX_FLOWS).append(" -exist\n");
                }
            }
        }
        return out.toString();
    }

    /** The flow sets an {@code ipset save} or {@code ipset list -n} output names. */
    public static Set<String> present(String listing) {
        Set<String> out = new TreeSet<>();
        for (String line : listing.split("\n")) {
            String[] f = line.strip().split("\\s+");
            String name = f.length >= 2 && f[0].equals("create") ? f[1] : f.length == 1 ? f[0] : "";
            if (isFlowSet(name)) {
                out.add(name);
            }
        }
        return out;
    }

    /**
     * Reads one flow set's {@code ipset save NAME} output: each element's key, packets and bytes. Returns
     * whether the set is full (as many elements as its {@code maxelem}: new flows go uncounted). A line this
     * cannot read (a protocol it does not know by name, an element without counters) is skipped: its flow
     * still counts in the kernel. No time left is given: a flow set's element is never refreshed (a re-add
     * would zero its counters), so its timeout runs from the flow's first packet, not its latest.
     */
    public static boolean parse(String save, Direction direction, List<CountedFlow> out) {
        long max = FlowMarks.MAX_FLOWS;
        int count = 0;
        for (String line : save.split("\n")) {
            String[] f = line.strip().split("\\s+");
            if (f.length >= 2 && f[0].equals("create")) {
                for (int i = 2; i + 1 < f.length; i++) {
                    if (f[i].equals("maxelem") && f[i + 1].matches("[0-9]{1,10}")) {
                        max = Long.parseLong(f[i + 1]);
                    }
                }
                continue;
            }
            if (f.length < 3 || !f[0].equals("add")) {
                continue;
            }
            count++;
            CountedFlow flow = element(f, direction);
            if (flow != null) {
                out.add(flow);
            }
        }
        return count >= max;
    }

    /** {@code add NAME SRC,PROTO:PORT,DST [timeout N] packets P bytes B}, or null if it is not that. */
    private static CountedFlow element(String[] f, Direction direction) {
        String[] key = f[2].split(",");
        if (key.length != 3) {
            return null;
        }
        int colon = key[1].lastIndexOf(':');
        if (colon < 1 || !key[1].substring(colon + 1).matches("[0-9]{1,5}")) {
            return null;
        }
        int protocol = protocol(key[1].substring(0, colon));
        int port = Integer.parseInt(key[1].substring(colon + 1));
        long packets = counter(f, "packets");
        long bytes = counter(f, "bytes");
        if (protocol < 0 || port > 65535 || packets < 0 || bytes < 0) {
            return null;
        }
        try {
            return new CountedFlow(direction, IpAddress.parse(key[0]), IpAddress.parse(key[2]), protocol, port, packets, bytes, null);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** The number after {@code word} among an element's options (timeout, counters, whatever a later ipset prints), or -1. */
    private static long counter(String[] f, String word) {
        for (int i = 3; i + 1 < f.length; i++) {
            if (f[i].equals(word)) {
                return f[i + 1].matches("[0-9]{1,18}") ? Long.parseLong(f[i + 1]) : -1;
            }
        }
        return -1;
    }

    /** ipset prints a protocol by its /etc/protocols name, or by number where it has none. */
    private static int protocol(String p) {
        if (p.matches("[0-9]{1,3}")) {
            int n = Integer.parseInt(p);
            return n <= 255 ? n : -1;
        }
        return switch (p) {
            case "tcp" -> 6;
            case "udp" -> 17;
            case "sctp" -> 132;
            case "udplite" -> 136;
            default -> -1;
        };
    }
}
