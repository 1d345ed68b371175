package io.npmagent.dataplane.policy;

import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ClusterNetworkPolicy;
import io.npmagent.dataplane.model.ClusterNetworkPolicy.NamespacedPods;
import io.npmagent.dataplane.model.ClusterNetworkPolicy.Peer;
import io.npmagent.dataplane.model.ClusterNetworkPolicy.Port;
import io.npmagent.dataplane.model.ClusterNetworkPolicy.PortRange;
import io.npmagent.dataplane.model.ClusterNetworkPolicy.ProtocolMatch;
import io.npmagent.dataplane.model.ClusterNetworkPolicy.Rule;
import io.npmagent.dataplane.model.ClusterNetworkPolicy.Subject;
import io.npmagent.dataplane.model.ClusterNetworkPolicy.TransportMatch;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.LabelSelector;
import io.npmagent.dataplane.model.Node;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.UnaryOperator;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/**
 * Random ClusterNetworkPolicies and nodes over the clusters of {@link ClusterArbitraries}: the same
 * namespaces, label keys and values, address pool and probe ports, so subjects and peers often select
 * its pods, networks cover its addresses and named ports resolve. Policies are valid unless broken on
 * purpose by a {@link Breakage}, which says what it broke.
 */
public final class ClusterPolicyArbitraries {
    /** Names of the random policies; a test's own policy takes another so it is never overwritten. */
    public static final List<String> NAMES = List.of("cnp0", "cnp1", "cnp2", "cnp3");
    public static final List<String> NAMESPACES = ClusterArbitraries.NAMESPACES;
    public static final List<Integer> PROBE_PORTS = ClusterArbitraries.PROBE_PORTS;

    // The keys ClusterArbitraries labels pods and namespaces with (private there).
    private static final List<String> POD_LABEL_KEYS = List.of("app", "tier");
    private static final List<String> NS_LABEL_KEYS = List.of("team", "env");
    private static final List<String> NODE_LABEL_KEYS = List.of("role", "zone");
    private static final List<String> VALUES = List.of("x", "y", "z");
    private static final List<String> NETWORKS = List.of(
            "10.0.0.0/24", "10.0.0.0/29", "10.0.0.8/29", "0.0.0.0/0", "10.0.0.0/8", "192.168.7.0/24", "fd00::/64", "fd00::/126", "::/0");
    /** Node addresses: outside ones, and pool addresses a (host-network) pod may have too. */
    private static final List<String> NODE_ADDRESSES = List.of("192.168.7.7", "fd00::99", "10.0.0.9", "10.0.0.200");
    private static final List<Integer> PORTS = List.of(53, 80, 81, 8080, 9090);
    private static final List<String> PORT_NAMES = List.of("http", "dns", "metrics", "sc", "nope");
    private static final LabelSelector UNREADABLE =
            new LabelSelector(Map.of(), List.of(new LabelSelector.Requirement("app", "Sometimes", List.of("x"))));

    private ClusterPolicyArbitraries() {}

    /** A random cluster of namespaces, pods and NetworkPolicies, as the compiler's differential test has. */
    public static Arbitrary<List<ClusterEvent>> baseEvents() {
        return ClusterArbitraries.events();
    }

    /**
     * Events of every kind in random order, ClusterNetworkPolicies (now and then broken, in any way, their
     * tier too; edited, their priority too, as the names repeat) and Nodes among them: what the compiler's
     * differential test replays.
     */
    public static Arbitrary<List<ClusterEvent>> eventsOfBothKinds() {
        return eventOfBothKinds().list().ofMinSize(4).ofMaxSize(40);
    }

    /** One event of {@link #eventsOfBothKinds()}. */
    public static Arbitrary<ClusterEvent> eventOfBothKinds() {
        return Arbitraries.frequencyOf(
                        Tuple.of(16, ClusterArbitraries.event()),
                        Tuple.of(2, node().map(ClusterEvent.NodeUpserted::new)),
                        Tuple.of(1, Arbitraries.of(ClusterArbitraries.NODES).map(ClusterEvent.NodeDeleted::new)),
                        Tuple.of(5, valid().map(ClusterEvent.ClusterPolicyUpserted::new)),
                        Tuple.of(1, Combinators.combine(valid(), breakage()).as((p, b) -> b.apply(p))
                                .map(ClusterEvent.ClusterPolicyUpserted::new)),
                        Tuple.of(1, Arbitraries.of(NAMES).map(ClusterEvent.ClusterPolicyDeleted::new)));
    }

    /**
     * A cluster: the base events, a few more pods (so that most clusters have some to select), then nodes
     * and (mostly valid) ClusterNetworkPolicies.
     */
    public static Arbitrary<ClusterState> cluster() {
        return Combinators.combine(baseEvents(), ClusterArbitraries.pod().list().ofMinSize(3).ofMaxSize(10),
                        node().list().ofMaxSize(2), maybeBroken().list().ofMaxSize(4))
                .as((events, pods, nodes, policies) -> {
                    List<ClusterEvent> all = new ArrayList<>(events);
                    pods.forEach(p -> all.add(new ClusterEvent.PodUpserted(p)));
                    nodes.forEach(n -> all.add(new ClusterEvent.NodeUpserted(n)));
                    policies.forEach(p -> all.add(new ClusterEvent.ClusterPolicyUpserted(p)));
                    return ClusterState.EMPTY.applyAll(all);
                });
    }

    /** Every address a pod or node has, plus a few nothing has: what the properties probe between. */
    public static Set<IpAddress> probeAddresses(ClusterState cluster) {
        Set<IpAddress> out = new TreeSet<>();
        cluster.pods().values().forEach(p -> out.addAll(p.ips()));
        cluster.nodes().values().forEach(n -> out.addAll(n.addresses()));
        ClusterArbitraries.EXTERNAL.forEach(ip -> out.add(IpAddress.parse(ip)));
        return out;
    }

    public static Arbitrary<Node> node() {
        return Combinators.combine(
                        Arbitraries.of(ClusterArbitraries.NODES),
                        Arbitraries.maps(Arbitraries.of(NODE_LABEL_KEYS), Arbitraries.of(VALUES)).ofMaxSize(2),
                        Arbitraries.of(NODE_ADDRESSES).list().ofMinSize(1).ofMaxSize(2).uniqueElements())
                .as((name, labels, addresses) -> new Node(name, labels, addresses.stream().map(IpAddress::parse).toList()));
    }

    /**
     * A selector the API can read: matchLabels and In, NotIn, Exists, DoesNotExist; empty (everything) a
     * third of the time, so that policies often select and peers often match.
     */
    public static Arbitrary<LabelSelector> selector(List<String> keys) {
        return Arbitraries.frequencyOf(Tuple.of(1, Arbitraries.just(LabelSelector.EMPTY)), Tuple.of(2, someSelector(keys)));
    }

    private static Arbitrary<LabelSelector> someSelector(List<String> keys) {
        Arbitrary<LabelSelector.Requirement> requirement = Combinators.combine(
                        Arbitraries.of(keys),
                        Arbitraries.of("In", "NotIn", "Exists", "DoesNotExist"),
                        Arbitraries.of(VALUES).list().ofMinSize(1).ofMaxSize(2))
                .as((key, op, values) -> new LabelSelector.Requirement(
                        key, op, op.equals("Exists") || op.equals("DoesNotExist") ? List.of() : values));
        return Combinators.combine(
                        Arbitraries.maps(Arbitraries.of(keys), Arbitraries.of(VALUES)).ofMaxSize(1),
                        requirement.list().ofMaxSize(1))
                .as(LabelSelector::new);
    }

    public static Arbitrary<Subject> subject() {
        return Arbitraries.oneOf(
                selector(NS_LABEL_KEYS).map(ns -> new Subject(ns, null)),
                Combinators.combine(selector(NS_LABEL_KEYS), selector(POD_LABEL_KEYS))
                        .as((ns, pods) -> new Subject(null, new NamespacedPods(ns, pods))));
    }

    static Arbitrary<Peer> podPeer() {
        return Arbitraries.oneOf(
                selector(NS_LABEL_KEYS).map(ns -> new Peer(ns, null, null, null, null)),
                Combinators.combine(selector(NS_LABEL_KEYS), selector(POD_LABEL_KEYS))
                        .as((ns, pods) -> new Peer(null, new NamespacedPods(ns, pods), null, null, null)));
    }

    /** A peer that matches by address: networks or nodes (egress only, and never with a named port). */
    static Arbitrary<Peer> addressPeer() {
        return Arbitraries.oneOf(
                Arbitraries.of(NETWORKS).list().ofMinSize(1).ofMaxSize(2).uniqueElements().map(n -> new Peer(null, null, null, n, null)),
                selector(NODE_LABEL_KEYS).map(nodes -> new Peer(null, null, nodes, null, null)));
    }

    static Arbitrary<ProtocolMatch> protocol(boolean named) {
        Arbitrary<Port> port = Arbitraries.oneOf(
                Arbitraries.of(PORTS).map(n -> new Port(n, null)),
                Arbitraries.of(new PortRange(53, 80), new PortRange(80, 8080), new PortRange(81, 9090)).map(r -> new Port(null, r)));
        Arbitrary<ProtocolMatch> transport = Combinators.combine(Arbitraries.of(0, 1, 2), port).as((which, p) -> {
            TransportMatch m = new TransportMatch(p);
            return new ProtocolMatch(which == 0 ? m : null, which == 1 ? m : null, which == 2 ? m : null, null);
        });
        if (!named) {
            return transport;
        }
        return Arbitraries.frequencyOf(
                Tuple.of(3, transport),
                Tuple.of(1, Arbitraries.of(PORT_NAMES).map(n -> new ProtocolMatch(null, null, null, n))));
    }

    static Arbitrary<Rule> rule(boolean egress) {
        Arbitrary<List<Peer>> peers = egress
                ? Arbitraries.frequencyOf(Tuple.of(3, podPeer()), Tuple.of(2, addressPeer())).list().ofMinSize(1).ofMaxSize(2)
                : podPeer().list().ofMinSize(1).ofMaxSize(2);
        return peers.flatMap(ps -> {
            boolean addressPeers = ps.stream().anyMatch(p -> p.networks() != null || p.nodes() != null);
            return Combinators.combine(
                            Arbitraries.of("Accept", "Deny", "Pass"),
                            protocol(!addressPeers).list().ofMinSize(1).ofMaxSize(2).injectNull(0.5),
                            Arbitraries.of("", "web", "dns").injectNull(0.5))
                    .as((action, protocols, name) -> new Rule(name, action, ps, protocols));
        });
    }

    /** A policy the API admits, with these names, tiers and priorities to choose from. */
    public static Arbitrary<ClusterNetworkPolicy> valid(List<String> names, List<String> tiers) {
        return Combinators.combine(
                        Arbitraries.of(names),
                        Arbitraries.of(tiers),
                        Arbitraries.of(0, 1, 5, 5, 10, 1000),
                        subject(),
                        rule(false).list().ofMaxSize(3),
                        rule(true).list().ofMaxSize(3))
                .as((name, tier, priority, subject, ingress, egress) -> new ClusterNetworkPolicy(
                        name, tier, priority, subject, ingress.isEmpty() ? null : ingress, egress.isEmpty() ? null : egress));
    }

    public static Arbitrary<ClusterNetworkPolicy> valid() {
        return valid(NAMES, List.of("Admin", "Baseline"));
    }

    /** Mostly valid; now and then broken, but never in its tier (so a Baseline policy stays one). */
    public static Arbitrary<ClusterNetworkPolicy> maybeBroken() {
        return Arbitraries.frequencyOf(
                Tuple.of(5, valid()),
                Tuple.of(1, Combinators.combine(valid(), breakage().filter(b -> !b.tier())).as((p, b) -> b.apply(p))));
    }

    /** A policy of {@code tier} whose every rule is a Pass. */
    public static Arbitrary<ClusterNetworkPolicy> passOnly(String name, int priority, String tier) {
        return valid(List.of(name), List.of(tier)).map(p -> new ClusterNetworkPolicy(
                p.name(), p.tier(), priority, p.subject(), allPass(p.ingress()), allPass(p.egress())));
    }

    private static List<Rule> allPass(List<Rule> rules) {
        return rules == null ? null : rules.stream().map(r -> new Rule(r.name(), "Pass", r.peers(), r.protocols())).toList();
    }

    /**
     * One way to make a valid policy invalid, keeping what a valid reading of it would be: the policy
     * itself, or, when the tier is what broke ({@code tier}), the policy in either tier.
     */
    public record Breakage(String what, boolean tier, UnaryOperator<ClusterNetworkPolicy> how) {
        public ClusterNetworkPolicy apply(ClusterNetworkPolicy p) {
            return how.apply(p);
        }

        @Override
        public String toString() {
            return what;
        }
    }

    public static Arbitrary<Breakage> breakage() {
        return Arbitraries.oneOf(policyBreakage(), ruleBreakage());
    }

    /** An error in the policy itself: its tier, priority, subject, or number of rules. */
    public static Arbitrary<Breakage> policyBreakage() {
        return Arbitraries.of(
                new Breakage("tier Bogus", true, p -> with(p, "Bogus", p.priority(), p.subject())),
                new Breakage("tier absent", true, p -> with(p, null, p.priority(), p.subject())),
                new Breakage("priority absent", false, p -> with(p, p.tier(), null, p.subject())),
                new Breakage("priority 1001", false, p -> with(p, p.tier(), 1001, p.subject())),
                new Breakage("priority -1", false, p -> with(p, p.tier(), -1, p.subject())),
                new Breakage("subject absent", false, p -> with(p, p.tier(), p.priority(), null)),
                new Breakage("subject with both", false, p -> with(p, p.tier(), p.priority(),
                        new Subject(LabelSelector.EMPTY, new NamespacedPods(null, LabelSelector.EMPTY)))),
                new Breakage("subject selector unreadable", false, ClusterPolicyArbitraries::unreadableSubject),
                new Breakage("26 rules", false, ClusterPolicyArbitraries::tooManyRules));
    }

    /** An error inside one rule (a policy without rules gets an unreadable subject instead). */
    public static Arbitrary<Breakage> ruleBreakage() {
        return Combinators.combine(Arbitraries.integers().between(0, 5), Arbitraries.of(
                        "domainNames peer added", "unknown peer added", "action Allow", "tcp: {} added", "name of 101 characters",
                        "network with host bits added"))
                .as((which, what) -> new Breakage(what + " (rule " + which + ")", false, p -> breakRule(p, which, what)));
    }

    private static ClusterNetworkPolicy with(ClusterNetworkPolicy p, String tier, Integer priority, Subject subject) {
        return new ClusterNetworkPolicy(p.name(), tier, priority, subject, p.ingress(), p.egress());
    }

    private static ClusterNetworkPolicy unreadableSubject(ClusterNetworkPolicy p) {
        Subject s = p.subject().namespaces() != null
                ? new Subject(UNREADABLE, null)
                : new Subject(null, new NamespacedPods(p.subject().pods().namespaceSelector(), UNREADABLE));
        return with(p, p.tier(), p.priority(), s);
    }

    /** Rule 0 repeated to 26 rules: the copies can never match first, so only the count is wrong. */
    private static ClusterNetworkPolicy tooManyRules(ClusterNetworkPolicy p) {
        boolean ingress = p.ingress() != null;
        List<Rule> rules = ingress ? p.ingress() : p.egress();
        if (rules == null) {
            return with(p, p.tier(), 1001, p.subject()); // no rule to repeat: break the priority instead
        }
        List<Rule> padded = new ArrayList<>(rules);
        padded.addAll(Collections.nCopies(26 - rules.size(), rules.get(0)));
        return new ClusterNetworkPolicy(p.name(), p.tier(), p.priority(), p.subject(),
                ingress ? padded : p.ingress(), ingress ? p.egress() : padded);
    }

    /** Breaks rule {@code which} of ingress then egress (modulo their number); without rules, the subject. */
    private static ClusterNetworkPolicy breakRule(ClusterNetworkPolicy p, int which, String what) {
        List<Rule> ingress = p.ingress() == null ? List.of() : p.ingress();
        List<Rule> egress = p.egress() == null ? List.of() : p.egress();
        int total = ingress.size() + egress.size();
        if (total == 0) {
            return unreadableSubject(p);
        }
        int i = which % total;
        boolean inIngress = i < ingress.size();
        List<Rule> rules = new ArrayList<>(inIngress ? ingress : egress);
        int at = inIngress ? i : i - ingress.size();
        Rule r = rules.get(at);
        List<Peer> peers = new ArrayList<>(r.peers());
        List<ProtocolMatch> protocols = r.protocols() == null ? null : new ArrayList<>(r.protocols());
        String action = r.action();
        String name = r.name();
        switch (what) {
            case "domainNames peer added" -> peers.add(new Peer(null, null, null, null, List.of("example.com")));
            case "unknown peer added" -> peers.add(new Peer(null, null, null, null, null));
            case "action Allow" -> action = "Allow";
            case "tcp: {} added" -> {
                protocols = protocols == null ? new ArrayList<>() : protocols;
                protocols.add(new ProtocolMatch(new TransportMatch(null), null, null, null));
            }
            case "name of 101 characters" -> name = "n".repeat(101);
            case "network with host bits added" -> peers.add(new Peer(null, null, null, List.of("10.0.0.1/24"), null));
            default -> throw new IllegalArgumentException(what);
        }
        rules.set(at, new Rule(name, action, peers, protocols));
        return new ClusterNetworkPolicy(p.name(), p.tier(), p.priority(), p.subject(),
                inIngress ? rules : p.ingress(), inIngress ? p.egress() : rules);
    }
}
