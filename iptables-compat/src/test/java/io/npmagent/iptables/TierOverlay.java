package io.npmagent.iptables;

import io.npmagent.dataplane.desired.StateDiff;
import io.npmagent.dataplane.desired.CompiledClusterPolicy;
import io.npmagent.dataplane.desired.CompiledClusterRule;
import io.npmagent.dataplane.desired.DesiredState;
import io.npmagent.dataplane.desired.IdentityId;
import io.npmagent.dataplane.desired.LocalPod;
import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.desired.PortMatch;
import io.npmagent.dataplane.desired.TierPolicies;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.tier.RuleAction;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * ClusterNetworkPolicy rows laid by hand over a compiled {@link DesiredState} (the compiler's pods,
 * NetworkPolicies and sets): policies, each pod's tier lists, and the peer sets their rules name. Tests
 * edit it and apply {@link StateDiff#between} the state before and after, as the compiler will.
 */
public final class TierOverlay {
    private final Map<String, CompiledClusterPolicy> policies = new TreeMap<>();
    private final Map<PodKey, TierPolicies> tiers = new TreeMap<>();
    /** Selector sets' members, by the pod that is a member (its identity is looked up in the base state). */
    private final Map<PeerSetKey, List<PodKey>> members = new TreeMap<>();

    public TierOverlay policy(String name, List<CompiledClusterRule> ingress, List<CompiledClusterRule> egress) {
        policies.put(name, new CompiledClusterPolicy(name, ingress, egress));
        return this;
    }

    public TierOverlay remove(String name) {
        policies.remove(name);
        return this;
    }

    public TierOverlay tiers(PodKey pod, TierPolicies t) {
        tiers.put(pod, t);
        return this;
    }

    /** A selector set (its key as a rule names it) whose members are these pods. */
    public TierOverlay members(PeerSetKey.SelectorPeers set, PodKey... pods) {
        members.put(set, List.of(pods));
        return this;
    }

    /** The base state with these rows: pods get their tier lists, sets named by a policy exist. */
    public DesiredState over(DesiredState base) {
        TreeMap<PeerSetKey, SortedSet<IdentityId>> sets = new TreeMap<>(base.peerSets());
        for (CompiledClusterPolicy p : policies.values()) {
            for (PeerSetKey k : p.peerSets()) {
                SortedSet<IdentityId> ids = new TreeSet<>(sets.getOrDefault(k, new TreeSet<>()));
                for (PodKey member : members.getOrDefault(k, List.of())) {
                    LocalPod pod = base.pods().get(member);
                    if (pod != null) {
                        ids.add(pod.identity());
                    }
                }
                sets.put(k, ids);
            }
        }
        TreeMap<PodKey, LocalPod> pods = new TreeMap<>();
        base.pods().forEach((k, p) -> pods.put(k, new LocalPod(p.key(), p.ips(), p.identity(), p.ingressPolicies(), p.egressPolicies(),
                p.bandwidth(), p.congestion(), tiers.getOrDefault(k, TierPolicies.NONE))));
        return new DesiredState(base.identities(), base.addresses(), sets, base.policies(), new TreeMap<>(policies), pods);
    }

    // ---- short spellings -------------------------------------------------------------------------------

    public static CompiledClusterRule rule(int index, RuleAction action, List<PeerSetKey> peers, List<PortMatch> ports) {
        return new CompiledClusterRule(index, "r" + index, action, peers.isEmpty(), peers, ports.isEmpty(), ports);
    }

    public static List<PortMatch> tcp(int port) {
        return List.of(PortMatch.PortRange.single(Protocol.TCP, port));
    }

    /** The host prefixes of these addresses, as a {@code networks} peer. */
    public static List<PeerSetKey> hosts(IpAddress... ips) {
        List<PeerSetKey> out = new ArrayList<>();
        for (IpAddress ip : ips) {
            out.add(new PeerSetKey.CidrPeers(Cidr.host(ip), List.of()));
        }
        return out;
    }

    /** Tier lists: Admin and Baseline for one direction, nothing for the other. */
    public static TierPolicies on(Direction d, List<String> admin, List<String> baseline) {
        return d == Direction.INGRESS
                ? new TierPolicies(admin, List.of(), baseline, List.of())
                : new TierPolicies(List.of(), admin, List.of(), baseline);
    }

    /** Tier lists for both directions. */
    public static TierPolicies both(List<String> adminIn, List<String> adminEg, List<String> baselineIn, List<String> baselineEg) {
        return new TierPolicies(adminIn, adminEg, baselineIn, baselineEg);
    }
}
