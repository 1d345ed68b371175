package io.npmagent.bpf.model;

import io.npmagent.dataplane.bandwidth.BandwidthLimits;
import io.npmagent.dataplane.desired.CompiledClusterPolicy;
import io.npmagent.dataplane.desired.CompiledClusterRule;
import io.npmagent.dataplane.desired.CompiledPolicy;
import io.npmagent.dataplane.desired.CompiledRule;
import io.npmagent.dataplane.desired.DesiredState;
import io.npmagent.dataplane.desired.DesiredStateInterpreter;
import io.npmagent.dataplane.desired.Identity;
import io.npmagent.dataplane.desired.IdentityId;
import io.npmagent.dataplane.desired.LocalPod;
import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.desired.PortMatch;
import io.npmagent.dataplane.desired.TierPolicies;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.model.Selector;
import io.npmagent.dataplane.tier.RuleAction;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Desired states with ClusterNetworkPolicies built by hand (the compiler does not emit them yet), the
 * delta between two of them, and the walk the design states, read straight from the rows by address
 * ({@link #allowed}): no peer classes, atoms or entries, so it checks the model's encoding.
 */
public final class TierStates {
    private TierStates() {}

    static final IpAddress[] PODS = ips("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6", "10.0.0.9");
    /** Addresses that are no pod, inside and outside the ipBlocks. */
    static final IpAddress[] OUTSIDE = ips("10.0.0.7", "10.0.0.200", "192.168.1.1", "172.16.0.1");
    static final int LOCAL = 4; // the first four pods are local
    static final List<Integer> PORTS = List.of(0, 53, 79, 80, 81, 8080, 8100, 9000, 65535);

    static IpAddress[] ips(String... s) {
        IpAddress[] out = new IpAddress[s.length];
        for (int i = 0; i < s.length; i++) {
            out[i] = IpAddress.parse(s[i]);
        }
        return out;
    }

    public static IdentityId id(int i) {
        return new IdentityId(IdentityId.FIRST + i);
    }

    public static Identity identity(int i, Map<PortMatch.NamedPort, Integer> named) {
        return new Identity("x", Map.of(), Map.of("app", "p" + i), named);
    }

    public static PeerSetKey.SelectorPeers selector(String name) {
        return PeerSetKey.SelectorPeers.inNamespace("x", new Selector(new TreeMap<>(Map.of("set", name)), List.of()));
    }

    public static PeerSetKey.CidrPeers cidr(String cidr, String... except) {
        return new PeerSetKey.CidrPeers(Cidr.parse(cidr), java.util.Arrays.stream(except).map(Cidr::parse).toList());
    }

    static final PortMatch.NamedPort HTTP = new PortMatch.NamedPort(Protocol.TCP, "http");
    static final PortMatch.NamedPort DNS = new PortMatch.NamedPort(Protocol.UDP, "dns");

    static LocalPod pod(int i, IdentityId identity, List<PolicyKey> ingress, List<PolicyKey> egress, TierPolicies tiers) {
        return new LocalPod(new PodKey("x", "p" + i), List.of(PODS[i]), identity, ingress, egress, BandwidthLimits.NONE, null, tiers);
    }

    /** A random state over a fixed universe of pods, identities, sets and ports (seeded: reproducible). */
    static DesiredState random(long seed) {
        Random r = new Random(seed);
        int identities = 4;
        SortedSet<PeerSetKey> selectors = new TreeSet<>(List.of(selector("s0"), selector("s1"), selector("s2")));
        List<PeerSetKey> cidrs = List.of(cidr("10.0.0.0/30"), cidr("10.0.0.0/29", "10.0.0.2/31"), cidr("10.0.0.5/32"),
                cidr("192.168.0.0/16"), cidr("10.0.0.0/24", "10.0.0.4/30", "10.0.0.200/32"));
        List<PortMatch> ports = List.of(PortMatch.PortRange.single(Protocol.TCP, 80), new PortMatch.PortRange(Protocol.TCP, 79, 81),
                PortMatch.PortRange.all(Protocol.TCP), PortMatch.PortRange.single(Protocol.UDP, 53),
                new PortMatch.PortRange(Protocol.UDP, 50, 60), PortMatch.PortRange.single(Protocol.SCTP, 80),
                new PortMatch.PortRange(Protocol.TCP, 8000, 8100), HTTP, DNS);

        TreeMap<IdentityId, Identity> ids = new TreeMap<>();
        for (int i = 0; i < identities; i++) {
            Map<PortMatch.NamedPort, Integer> named = new HashMap<>();
            if (r.nextInt(3) > 0) {
                named.put(HTTP, r.nextBoolean() ? 80 : 8080);
            }
            if (r.nextInt(3) == 0) {
                named.put(DNS, 53);
            }
            ids.put(id(i), identity(i, named));
        }
        TreeMap<IpAddress, IdentityId> addresses = new TreeMap<>();
        for (IpAddress ip : PODS) {
            addresses.put(ip, id(r.nextInt(identities)));
        }
        TreeMap<PeerSetKey, SortedSet<IdentityId>> sets = new TreeMap<>();
        for (PeerSetKey s : selectors) {
            SortedSet<IdentityId> members = new TreeSet<>();
            ids.keySet().forEach(id -> {
                if (r.nextInt(3) == 0) {
                    members.add(id);
                }
            });
            sets.put(s, members);
        }
        cidrs.forEach(c -> sets.put(c, new TreeSet<>()));
        List<PeerSetKey> allSets = new ArrayList<>(sets.keySet());

        TreeMap<String, CompiledClusterPolicy> clusterPolicies = new TreeMap<>();
        for (int c = 0; c < 5; c++) {
            List<List<CompiledClusterRule>> byDirection = new ArrayList<>();
            for (int d = 0; d < 2; d++) {
                List<CompiledClusterRule> rules = new ArrayList<>();
                int n = r.nextInt(4);
                for (int i = 0; i < n; i++) {
                    boolean anyPeer = r.nextInt(8) == 0;
                    List<PeerSetKey> peers = anyPeer ? List.of() : pick(r, allSets, 1 + r.nextInt(2));
                    boolean anyPort = r.nextInt(3) == 0;
                    List<PortMatch> ps = anyPort ? List.of() : pick(r, ports, 1 + r.nextInt(2));
                    rules.add(new CompiledClusterRule(i, null, RuleAction.values()[r.nextInt(3)], anyPeer, peers, anyPort, ps));
                }
                byDirection.add(rules);
            }
            if (r.nextInt(6) > 0) {
                clusterPolicies.put("c" + c, new CompiledClusterPolicy("c" + c, byDirection.get(0), byDirection.get(1)));
            }
        }
        List<String> names = List.of("c0", "c1", "c2", "c3", "c4", "ghost");

        TreeMap<PolicyKey, CompiledPolicy> policies = new TreeMap<>();
        for (int p = 0; p < 3; p++) {
            Set<Direction> directions = EnumSet.noneOf(Direction.class);
            List<List<CompiledRule>> byDirection = new ArrayList<>();
            for (Direction d : Direction.values()) {
                if (r.nextBoolean()) {
                    directions.add(d);
                }
                List<CompiledRule> rules = new ArrayList<>();
                int n = r.nextInt(3);
                for (int i = 0; i < n; i++) {
                    boolean anyPeer = r.nextInt(5) == 0;
                    boolean anyPort = r.nextInt(3) == 0;
                    rules.add(new CompiledRule(i, anyPeer, anyPeer ? List.of() : pick(r, allSets, 1 + r.nextInt(2)), anyPort,
                            anyPort ? List.of() : pick(r, ports, 1 + r.nextInt(2))));
                }
                byDirection.add(rules);
            }
            PolicyKey key = new PolicyKey("x", "np" + p);
            policies.put(key, new CompiledPolicy(key, directions, byDirection.get(0), byDirection.get(1)));
        }
        List<PolicyKey> policyKeys = List.of(new PolicyKey("x", "np0"), new PolicyKey("x", "np1"), new PolicyKey("x", "np2"),
                new PolicyKey("x", "missing"));

        TreeMap<PodKey, LocalPod> pods = new TreeMap<>();
        for (int i = 0; i < LOCAL; i++) {
            if (r.nextInt(8) == 0) {
                continue;
            }
            List<List<String>> tiers = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                tiers.add(r.nextInt(3) == 0 ? List.of() : pick(r, names, r.nextInt(4)));
            }
            List<List<PolicyKey>> isolating = new ArrayList<>();
            for (Direction d : Direction.values()) {
                // as the compiler lists them: policies isolating the direction; now and then one not held (fail closed)
                List<PolicyKey> candidates = new ArrayList<>(policies.values().stream().filter(p -> p.isolates(d)).map(CompiledPolicy::key).toList());
                List<PolicyKey> chosen = new ArrayList<>(pick(r, candidates, r.nextInt(3)));
                if (r.nextInt(8) == 0) {
                    chosen.add(policyKeys.get(3));
                }
                isolating.add(sorted(chosen));
            }
            LocalPod pod = pod(i, addresses.get(PODS[i]), isolating.get(0), isolating.get(1),
                    r.nextInt(4) == 0 ? TierPolicies.NONE : new TierPolicies(tiers.get(0), tiers.get(1), tiers.get(2), tiers.get(3)));
            pods.put(pod.key(), pod);
        }
        return new DesiredState(ids, addresses, sets, policies, clusterPolicies, pods);
    }

    private static <T extends Comparable<T>> List<T> sorted(List<T> l) {
        return new ArrayList<>(new TreeSet<>(l));
    }

    /** Up to {@code n} distinct elements of {@code from} in random order. */
    private static <T> List<T> pick(Random r, List<T> from, int n) {
        List<T> copy = new ArrayList<>(from);
        java.util.Collections.shuffle(copy, r);
        return List.copyOf(copy.subList(0, Math.min(n, copy.size())));
    }

    // ---- the walk, by address: dataplane's DesiredStateInterpreter, written apart from the model ----------

    /** Whether both sides allow a new connection from {@code src} to {@code dst} ({@code protocol} null: one without ports). */
    public static boolean allowed(DesiredState s, IpAddress src, IpAddress dst, Protocol protocol, int port) {
        return new DesiredStateInterpreter(s).allowed(src, dst, port, protocol);
    }

    /** Whether the side of {@code d} allows it (a side that is no local pod's does). */
    public static boolean side(DesiredState s, Direction d, IpAddress src, IpAddress dst, Protocol protocol, int port) {
        return new DesiredStateInterpreter(s).side(d, src, dst, port, protocol) != DesiredStateInterpreter.Outcome.DENY;
    }
}
