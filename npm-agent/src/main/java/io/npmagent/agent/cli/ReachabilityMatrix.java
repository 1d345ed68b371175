package io.npmagent.agent.cli;

import io.npmagent.dataplane.eval.ReferenceEvaluator;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.ContainerPort;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.Protocol;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The reference evaluator's verdict for every ordered pair of distinct pods with an address, on every
 * port the destination declares, per address family: a table for people, one block per port and
 * protocol, rows the source, columns the destination (by number, from the legend).
 *
 * <pre>
 * IPv4 TCP/5432    1 2 3
 *    1 data/cache  - . -
 * </pre>
 * {@code .} allowed, {@code X} denied, {@code -} not applicable: the same pod, or a destination that
 * does not declare that port. Named ports need no block of their own: a pod's name for a port only
 * decides which policies admit it, and that is in the verdict.
 */
final class ReachabilityMatrix {
    static final char ALLOWED = '.';
    static final char DENIED = 'X';
    static final char NOT_APPLICABLE = '-';

    private record PortKey(int port, Protocol protocol) {
        @Override
        public String toString() {
            return protocol + "/" + port;
        }
    }

    private static final Comparator<PortKey> PORT_ORDER =
            Comparator.comparingInt(PortKey::port).thenComparing(PortKey::protocol);

    private final ReferenceEvaluator evaluator;
    private final Map<PodKey, Integer> index = new LinkedHashMap<>();
    private final List<Pod> pods;
    private int allowed;
    private int denied;

    ReachabilityMatrix(ClusterState cluster) {
        this.evaluator = new ReferenceEvaluator(cluster);
        this.pods = cluster.pods().values().stream().filter(p -> !p.ips().isEmpty()).collect(Collectors.toList());
        for (Pod p : pods) {
            index.put(p.key(), index.size() + 1);
        }
    }

    String render() {
        StringBuilder sb = new StringBuilder();
        sb.append("# reachability (reference evaluator): '").append(ALLOWED).append("' allowed, '").append(DENIED)
                .append("' denied, '").append(NOT_APPLICABLE)
                .append("' n/a (same pod, or the destination does not declare the port)\n");
        if (pods.isEmpty()) {
            return sb.append("no pod has an address\n").toString();
        }
        legend(sb);
        family(sb, false);
        family(sb, true);
        sb.append('\n').append(allowed).append(" allowed, ").append(denied).append(" denied\n");
        return sb.toString();
    }

    private void legend(StringBuilder sb) {
        int width = nameWidth(pods);
        for (Pod p : pods) {
            sb.append(String.format("%4d ", index.get(p.key()))).append(pad(Text.pod(p.key()), width)).append("  ")
                    .append(p.ips().stream().map(IpAddress::toString).collect(Collectors.joining(",")));
            if (!p.ports().isEmpty()) {
                sb.append("  ").append(p.ports().stream().map(ReachabilityMatrix::port).collect(Collectors.joining(",")));
            }
            if (p.hostNetwork()) {
                sb.append("  (hostNetwork)");
            }
            if (p.phase().terminal()) {
                sb.append("  (").append(p.phase()).append(')');
            }
            sb.append('\n');
        }
    }

    private void family(StringBuilder sb, boolean v6) {
        String name = v6 ? "IPv6" : "IPv4";
        List<Pod> members = pods.stream()
                .filter(p -> (v6 ? p.ipv6() : p.ipv4()).isPresent())
                .collect(Collectors.toList());
        if (members.size() < 2) {
            sb.append('\n').append(name).append(": fewer than two pods have an ").append(name).append(" address\n");
            return;
        }
        TreeSet<PortKey> ports = new TreeSet<>(PORT_ORDER);
        members.forEach(p -> p.ports().forEach(cp -> ports.add(new PortKey(cp.port(), cp.protocol()))));
        if (ports.isEmpty()) {
            sb.append('\n').append(name).append(": no pod declares a port\n");
            return;
        }
        int width = nameWidth(members);
        int cell = String.valueOf(pods.size()).length() + 1;
        for (PortKey port : ports) {
            sb.append('\n').append(pad(name + " " + port, width + 5));
            for (Pod to : members) {
                sb.append(String.format("%" + cell + "d", index.get(to.key())));
            }
            sb.append('\n');
            for (Pod from : members) {
                sb.append(String.format("%4d ", index.get(from.key()))).append(pad(Text.pod(from.key()), width));
                for (Pod to : members) {
                    sb.append(" ".repeat(cell - 1)).append(verdict(from, to, v6, port));
                }
                sb.append('\n');
            }
        }
    }

    private char verdict(Pod from, Pod to, boolean v6, PortKey port) {
        boolean declared = to.ports().stream()
                .anyMatch(cp -> cp.port() == port.port() && cp.protocol() == port.protocol());
        if (from.key().equals(to.key()) || !declared) {
            return NOT_APPLICABLE;
        }
        if (evaluator.allowed(from.key(), to.key(), v6, port.port(), port.protocol()).allowed()) {
            allowed++;
            return ALLOWED;
        }
        denied++;
        return DENIED;
    }

    private static String port(ContainerPort p) {
        return (p.name() == null ? "" : Text.name(p.name()) + ":") + p.port() + "/" + p.protocol();
    }

    private static int nameWidth(List<Pod> pods) {
        return pods.stream().mapToInt(p -> Text.pod(p.key()).length()).max().orElse(0);
    }

    private static String pad(String s, int width) {
        return s.length() >= width ? s : s + " ".repeat(width - s.length());
    }
}
