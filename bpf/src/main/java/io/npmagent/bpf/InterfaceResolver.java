package io.npmagent.bpf;

import io.npmagent.dataplane.backend.BackendException;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.CommandRunner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds local pods' host-side interfaces, the way the CNI left them, from one dump of the node's
 * links and routes (read fresh on every call, so an interface that was replaced, the same address on
 * a new veth, is found as the new one).
 *
 * <ul>
 *   <li>Routed CNIs (Calico, Cilium's veth mode, the sandbox): the most specific unicast route to the
 *       pod's address names its veth.
 *   <li>Bridge CNIs (bridge plugin, flannel's cni0): the route names the bridge; the pod's MAC comes
 *       from the bridge's neighbour table and its port from the forwarding database. The kernel learns
 *       both only from traffic between the node and the pod, which pod-to-pod traffic on the bridge
 *       is not, so a pod could stay unfound (and unenforced) however busy it was, and a found one be
 *       lost when its forwarding entry aged out (300 s). So every bridged pod's address gets a
 *       <em>managed</em> neighbour entry (kernel 5.16+): the kernel resolves it at once and keeps
 *       re-resolving it, which also keeps the pod's forwarding entry fresh. Ours carry protocol
 *       {@value #NEIGH_PROTOCOL}, so {@link #release} and an uninstall find them.
 * </ul>
 *
 * A pod whose interface is not found is not enforced by this backend yet: the status reports it.
 */
final class InterfaceResolver {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    /** {@code 7: veth1a2b@if2: <BROADCAST,...> ... master cni0 ...}. */
    private static final Pattern LINK = Pattern.compile("^(\\d+):\\s+([^:@\\s]+)(@\\S+)?:");
    /** Route types that never lead to a pod. */
    private static final Set<String> NOT_UNICAST = Set.of("local", "broadcast", "multicast", "anycast", "unreachable",
            "blackhole", "prohibit", "throw", "nat");
    private static final Pattern LLADDR = Pattern.compile("\\blladdr\\s+(\\S+)");
    /** The protocol our neighbour entries carry (110, 'n'; iproute2 shows it as "proto 110"). */
    static final String NEIGH_PROTOCOL = "0x6e";
    /** How long a batch waits for the kernel to resolve a newly managed neighbour (a local bridge: microseconds). */
    private static final Duration RESOLVE_WAIT = Duration.ofMillis(500);
    private static final long RESOLVE_POLL_MILLIS = 10;
    private static final System.Logger LOG = System.getLogger(InterfaceResolver.class.getName());

    private final CommandRunner ip;
    private boolean managedRefused;
    /** Whether entries of ours may exist: unknown at start (an earlier run's), then as the last release left them. */
    private boolean mayOwnEntries = true;
    private Set<Integer> interfaces = Set.of();

    InterfaceResolver(CommandRunner ip) {
        this.ip = ip;
    }

    /** Every interface's index: where an uninstall looks for filters of ours. */
    static List<Integer> allInterfaces(CommandRunner ip) {
        List<Integer> out = new ArrayList<>();
        for (String line : new InterfaceResolver(ip).lines(List.of("ip", "-o", "link", "show"))) {
            Matcher m = LINK.matcher(line);
            if (m.find()) {
                out.add(Integer.parseInt(m.group(1)));
            }
        }
        return out;
    }

    /** The interface index behind each address that has one (addresses without are left out). */
    Map<IpAddress, Integer> resolve(Collection<IpAddress> addresses) {
        Map<IpAddress, Integer> out = new HashMap<>();
        if (addresses.isEmpty()) {
            return out;
        }
        Map<String, Integer> ifindex = new HashMap<>();
        Set<String> bridges = new HashSet<>();
        for (String line : lines(List.of("ip", "-o", "-d", "link", "show"))) {
            Matcher m = LINK.matcher(line);
            if (m.find()) {
                ifindex.put(m.group(2), Integer.parseInt(m.group(1)));
                if (line.contains("\\    bridge ")) {
                    bridges.add(m.group(2));
                }
            }
        }
        interfaces = Set.copyOf(ifindex.values());
        // Host routes (one per pod on a routed node: thousands) by address; the few wider ones scanned.
        Map<IpAddress, Route> hostRoutes = new HashMap<>();
        List<Route> wider = new ArrayList<>();
        for (Route r : routes(lines(List.of("ip", "-o", "route", "show", "table", "all")))) {
            if (r.prefix.prefixLength() == r.prefix.network().bitLength()) {
                hostRoutes.putIfAbsent(r.prefix.network(), r);
            } else {
                wider.add(r);
            }
        }
        Map<String, List<IpAddress>> bridged = new HashMap<>();
        for (IpAddress a : addresses) {
            Route best = hostRoutes.get(a);
            if (best == null) {
                best = longest(wider, a);
            }
            if (best == null || !ifindex.containsKey(best.dev)) {
                continue;
            }
            if (bridges.contains(best.dev)) {
                bridged.computeIfAbsent(best.dev, d -> new ArrayList<>()).add(a);
            } else if (best.prefix.prefixLength() == a.bitLength()) {
                out.put(a, ifindex.get(best.dev)); // a host route: the pod's own interface
            }
        }
        bridged.forEach((bridge, behind) -> resolveBridged(bridge, behind, ifindex, out));
        return out;
    }

    /** Whether the interface was there at the last {@link #resolve} (an index is not reused while the counter has not wrapped). */
    boolean existed(int ifindex) {
        return interfaces.contains(ifindex);
    }

    /**
     * The node's own addresses (every interface's but loopback's), which are always admitted: the
     * netfilter backends judge forwarded traffic only, so kubelet probes and node-local services pass
     * there, and must here too.
     */
    Set<IpAddress> nodeAddresses() {
        Set<IpAddress> out = new HashSet<>();
        for (String line : lines(List.of("ip", "-o", "addr", "show"))) {
            // 2: eth0    inet 192.0.2.2/24 brd 192.0.2.255 scope global eth0\ ...
            String[] f = line.trim().split("\\s+");
            if (f.length < 4 || !(f[2].equals("inet") || f[2].equals("inet6")) || line.contains(" scope host")) {
                continue;
            }
            try {
                String a = f[3];
                out.add(IpAddress.parse(a.contains("/") ? a.substring(0, a.indexOf('/')) : a));
            } catch (IllegalArgumentException notAnAddress) {
                // a peer address form we do not read: the node is still reached by its others
            }
        }
        return out;
    }

    private void resolveBridged(String bridge, List<IpAddress> behind, Map<String, Integer> ifindex, Map<IpAddress, Integer> out) {
        Neighbours n = neighbours(bridge);
        List<IpAddress> unmanaged = behind.stream().filter(a -> !n.managed.contains(a)).toList();
        // Newly managed: the kernel is resolving them now; wait a moment for those not known yet.
        boolean resolving = !unmanaged.isEmpty() && manage(bridge, unmanaged);
        long deadline = System.nanoTime() + RESOLVE_WAIT.toNanos();
        for (Neighbours now = n; place(behind, now, ifindex, out) < behind.size() && resolving; now = neighbours(bridge)) {
            if (System.nanoTime() > deadline) {
                return;
            }
            sleep();
        }
    }

    /** The bridge's neighbour table (address to MAC; which are managed) and forwarding database (MAC to port). */
    private record Neighbours(Map<IpAddress, String> mac, Set<IpAddress> managed, Map<String, String> port) {}

    private Neighbours neighbours(String bridge) {
        Map<IpAddress, String> mac = new HashMap<>();
        Set<IpAddress> managed = new HashSet<>();
        for (String line : lines(List.of("ip", "-o", "neigh", "show", "dev", bridge))) {
            String[] f = line.trim().split("\\s+");
            IpAddress a;
            try {
                a = IpAddress.parse(f[0]);
            } catch (IllegalArgumentException notAnAddress) {
                continue; // a line we do not understand names no pod
            }
            Matcher ll = LLADDR.matcher(line);
            if (ll.find()) {
                mac.put(a, ll.group(1).toLowerCase(Locale.ROOT));
            }
            if (line.contains(" managed") || line.contains(" PERMANENT")) {
                managed.add(a); // an operator's static entry is left as it is
            }
        }
        Map<String, String> port = new HashMap<>();
        for (String line : lines(List.of("bridge", "fdb", "show", "br", bridge))) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 3 && f[1].equals("dev") && !line.contains(" permanent")) {
                port.put(f[0].toLowerCase(Locale.ROOT), f[2]);
            }
        }
        return new Neighbours(mac, managed, port);
    }

    /** Puts each address whose port the tables name into {@code out}; returns how many of {@code behind} were placed. */
    private static int place(List<IpAddress> behind, Neighbours n, Map<String, Integer> ifindex, Map<IpAddress, Integer> out) {
        int placed = 0;
        for (IpAddress a : behind) {
            String dev = n.port.get(n.mac.get(a));
            if (dev != null && ifindex.containsKey(dev)) {
                out.put(a, ifindex.get(dev));
                placed++;
            }
        }
        return placed;
    }

    /**
     * Makes the addresses' neighbour entries on the bridge managed and ours, in one {@code ip} process;
     * false when the kernel or iproute2 refuses (before 5.16): then pods are found only once the node has
     * talked to them, as before, and this is said once.
     */
    private boolean manage(String bridge, List<IpAddress> addresses) {
        if (managedRefused) {
            return false;
        }
        StringBuilder batch = new StringBuilder();
        for (IpAddress a : addresses) {
            batch.append("neigh replace ").append(a).append(" dev ").append(bridge).append(" managed protocol ").append(NEIGH_PROTOCOL)
                    .append('\n');
        }
        mayOwnEntries = true;
        CommandResult r = ip.run(List.of("ip", "-force", "-batch", "-"), batch.toString(), TIMEOUT);
        if (!r.ok()) {
            managedRefused = true;
            LOG.log(System.Logger.Level.WARNING, "bpf: the kernel refused managed neighbour entries on {0} ({1}); a bridged pod is found only "
                    + "once the node has exchanged a packet with it, and not enforced until then", bridge, r.errorSummary());
            return false;
        }
        return true;
    }

    /**
     * Removes our neighbour entries for addresses not in {@code keep} (pods that left). Skipped once a
     * release left none and this run has made none since (a routed node: no process every period).
     */
    void release(Set<IpAddress> keep) {
        if (!mayOwnEntries) {
            return;
        }
        StringBuilder batch = new StringBuilder();
        boolean kept = false;
        for (OwnEntry e : ours()) {
            if (keep.contains(e.address())) {
                kept = true;
            } else {
                batch.append("neigh del ").append(e.address()).append(" dev ").append(e.dev()).append('\n');
            }
        }
        if (!batch.isEmpty()) {
            ip.run(List.of("ip", "-force", "-batch", "-"), batch.toString(), TIMEOUT);
        }
        mayOwnEntries = kept;
    }

    /** Removes every neighbour entry any run of this backend made. */
    static void releaseAll(CommandRunner ip) {
        new InterfaceResolver(ip).release(Set.of());
    }

    private record OwnEntry(IpAddress address, String dev) {}

    /** Our neighbour entries, found by their protocol. */
    private List<OwnEntry> ours() {
        List<OwnEntry> out = new ArrayList<>();
        for (String line : lines(List.of("ip", "-o", "neigh", "show", "protocol", NEIGH_PROTOCOL))) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 3 && f[1].equals("dev")) {
                try {
                    out.add(new OwnEntry(IpAddress.parse(f[0]), f[2]));
                } catch (IllegalArgumentException notAnAddress) {
                    // a line we do not understand names no entry of ours
                }
            }
        }
        return out;
    }

    private static void sleep() {
        try {
            Thread.sleep(RESOLVE_POLL_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private record Route(Cidr prefix, String dev) {}

    private static Route longest(List<Route> routes, IpAddress a) {
        Route best = null;
        for (Route r : routes) {
            if (r.prefix.contains(a) && (best == null || r.prefix.prefixLength() > best.prefix.prefixLength())) {
                best = r;
            }
        }
        return best;
    }

    /** Unicast routes with an interface: {@code [unicast] PREFIX [via GW] dev DEV ...}. */
    private static List<Route> routes(List<String> lines) {
        List<Route> out = new ArrayList<>();
        for (String line : lines) {
            String[] f = line.trim().split("\\s+");
            int i = 0;
            if (f.length > 0 && f[0].equals("unicast")) {
                i = 1;
            }
            if (f.length <= i || NOT_UNICAST.contains(f[i]) || f[i].equals("default")) {
                continue;
            }
            int dev = List.of(f).indexOf("dev");
            if (dev < 0 || dev + 1 >= f.length) {
                continue;
            }
            try {
                String p = f[i];
                out.add(new Route(p.contains("/") ? Cidr.parse(p) : Cidr.host(IpAddress.parse(p)), f[dev + 1]));
            } catch (IllegalArgumentException notAPrefix) {
                // not a route to an address (e.g. an mpls route): names no pod
            }
        }
        return out;
    }

    private List<String> lines(List<String> argv) {
        CommandResult r = ip.run(argv, "", TIMEOUT);
        if (!r.ok()) {
            throw new BackendException(
                    "cannot read the node's interfaces: " + r.errorSummary(), "");
        }
        return r.stdout().lines().toList();
    }
}
