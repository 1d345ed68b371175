package io.npmagent.iptables.model;

import io.npmagent.dataplane.desired.Change;
import io.npmagent.dataplane.desired.CompiledClusterPolicy;
import io.npmagent.dataplane.desired.CompiledClusterRule;
import io.npmagent.dataplane.desired.CompiledPolicy;
import io.npmagent.dataplane.desired.CompiledRule;
import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.desired.Identity;
import io.npmagent.dataplane.desired.IdentityId;
import io.npmagent.dataplane.desired.LocalPod;
import io.npmagent.dataplane.desired.Membership;
import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.desired.PortMatch;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Tier;
import io.npmagent.dataplane.tier.RuleAction;
import io.npmagent.dataplane.util.Multimaps;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * The desired state as netfilter objects, for the iptables and nftables backends alike: address sets
 * (a selector set's member addresses, an ipBlock's prefixes, the pods serving a named port), policy
 * chains, pod chains and dispatch. It holds the rows applied so far, and after each {@link #apply}
 * says what changed ({@link #takeDirty}): sets that appear or go, members that appear or go, chains to
 * re-render. Renderers turn objects into restore files or nft scripts; nothing here knows either.
 *
 * <p><b>Only what a local pod reaches.</b> A policy chain exists while some local pod's chain jumps to
 * it, and a set while some existing policy chain names it: a cluster's 10,000 policies make a few dozen
 * chains on a node of 110 pods, not 20,000 (nft reads every chain of the table before any transaction,
 * so the table's size is paid on each batch). The model still holds every policy and every selector
 * set's members, so a policy or set that becomes reachable is written whole in the same batch as the
 * jump that reaches it.
 *
 * <p><b>Fail closed.</b> A pod's chain jumps only to policies the model holds: a policy whose batch
 * was refused is missing, and the pod stays isolated without its allows until it lands (its chain is
 * re-rendered then). A ClusterNetworkPolicy the model does not hold denies whatever reaches its place
 * in the pod's tier list ({@link #steps}).
 *
 * <p><b>Tiers.</b> A pod chain exists for each direction that is judged ({@link LocalPod#judged}):
 * NetworkPolicy isolates it or a ClusterNetworkPolicy has a say. It consults, in order, the pod's Admin
 * tier, then its NetworkPolicies (if they isolate it: final), else its Baseline tier ({@link PodSteps}).
 * A ClusterNetworkPolicy has one chain per direction and family, shared by every pod that lists it in
 * either tier, which exists (like a NetworkPolicy's) while a pod chain may jump to it.
 *
 * <p>Not thread-safe: the backend's single flush thread owns it.
 */
public final class NetfilterModel {
    private final Map<IdentityId, Identity> identities = new HashMap<>();
    private final Map<IpAddress, IdentityId> addresses = new HashMap<>();
    private final Map<IdentityId, Set<IpAddress>> addressesOf = new HashMap<>();
    private final Map<PeerSetKey.SelectorPeers, Set<IdentityId>> selectorSets = new HashMap<>();
    private final Map<IdentityId, Set<PeerSetKey.SelectorPeers>> setsOf = new HashMap<>();
    private final Set<PeerSetKey.CidrPeers> cidrSets = new HashSet<>();
    private final Map<PolicyKey, CompiledPolicy> policies = new HashMap<>();
    private final Map<PodKey, LocalPod> pods = new HashMap<>();
    private final Map<PolicyKey, Set<PodKey>> podsListing = new HashMap<>();
    private final Map<String, CompiledClusterPolicy> clusterPolicies = new HashMap<>();
    /** The pods whose tier lists name each ClusterNetworkPolicy (held or not). */
    private final Map<String, Set<PodKey>> podsListingCluster = new HashMap<>();
    /**
     * The tier of each ClusterNetworkPolicy a pod lists, as the pods list it (the compiled policy does not
     * carry it): what a Deny's flow attribution names. A tier edit moves the policy between a pod's lists,
     * and its chains are re-rendered with the new name.
     */
    private final Map<String, Tier> clusterTiers = new HashMap<>();
    /** Pod chains jumping to each policy chain (of either kind): the policy chain exists while this is positive. */
    private final Map<ChainId, Integer> jumps = new HashMap<>();
    /** The sets each existing policy chain's rules name, as last counted in {@link #setRefs}. */
    private final Map<ChainId, Set<SetId>> setsNamed = new HashMap<>();
    /** Existing policy chains naming each set: the set exists while this is positive. */
    private final Map<SetId, Integer> setRefs = new HashMap<>();

    private final Set<SetId> setsChanged = new HashSet<>();
    private final Map<SetId, Set<Member>> membersChanged = new HashMap<>();
    private final Set<ChainId> chainsChanged = new HashSet<>();

    /**
     * What may have changed since the last {@link #takeDirty}: sets that may have appeared or gone,
     * members that may have appeared or gone, chains whose rules may differ. A backend compares exactly
     * these with what it knows the kernel holds; after a refused batch is undone, the same comparison
     * puts back whatever part of it reached the kernel.
     */
    public record Dirty(Set<SetId> sets, Map<SetId, Set<Member>> members, Set<ChainId> chains) {
        public boolean isEmpty() {
            return sets.isEmpty() && members.isEmpty() && chains.isEmpty();
        }

        /** This and {@code other} together. */
        public Dirty plus(Dirty other) {
            Set<SetId> s = new HashSet<>(sets);
            s.addAll(other.sets);
            Map<SetId, Set<Member>> m = new HashMap<>();
            members.forEach((k, v) -> m.put(k, new HashSet<>(v)));
            other.members.forEach((k, v) -> m.computeIfAbsent(k, x -> new HashSet<>()).addAll(v));
            Set<ChainId> c = new HashSet<>(chains);
            c.addAll(other.chains);
            return new Dirty(s, m, c);
        }
    }

    public void apply(DesiredDelta delta) {
        // Member changes are the difference of each touched identity's contribution before and after.
        Set<IdentityId> touched = new HashSet<>(delta.identities().keySet());
        delta.addresses().values().forEach(c -> {
            if (c.before() != null) {
                touched.add(c.before());
            }
            if (c.after() != null) {
                touched.add(c.after());
            }
        });
        delta.members().keySet().forEach(m -> touched.add(m.identity()));
        Map<IdentityId, Map<SetId, Set<Member>>> before = new HashMap<>();
        touched.forEach(id -> before.put(id, contribution(id)));

        delta.peerSets().forEach((key, present) -> setChanged(key, present));
        delta.identities().forEach((id, c) -> {
            if (c.isRemoval()) {
                identities.remove(id);
            } else {
                identities.put(id, c.after());
            }
        });
        delta.addresses().forEach(this::addressChanged);
        delta.members().forEach(this::memberChanged);
        delta.policies().forEach(this::policyChanged);
        delta.clusterPolicies().forEach(this::clusterPolicyChanged);
        delta.pods().forEach(this::podChanged);

        touched.forEach(id -> diff(before.get(id), contribution(id)));
    }

    private void setChanged(PeerSetKey key, boolean present) {
        if (key instanceof PeerSetKey.SelectorPeers s) {
            if (present) {
                selectorSets.put(s, new HashSet<>());
            } else {
                selectorSets.remove(s);
            }
            for (Family f : Family.values()) {
                markSet(new SetId.Selector(s, f));
            }
        } else if (key instanceof PeerSetKey.CidrPeers c) {
            if (present) {
                cidrSets.add(c);
            } else {
                cidrSets.remove(c);
            }
            markSet(new SetId.Cidr(c, Family.of(c.cidr())));
        }
    }

    private void addressChanged(IpAddress ip, Change<IdentityId> c) {
        if (c.before() != null) {
            Multimaps.remove(addressesOf, c.before(), ip);
        }
        if (c.isRemoval()) {
            addresses.remove(ip);
        } else {
            addresses.put(ip, c.after());
            Multimaps.add(addressesOf, c.after(), ip);
        }
    }

    private void memberChanged(Membership m, boolean present) {
        PeerSetKey.SelectorPeers set = (PeerSetKey.SelectorPeers) m.set();
        if (present) {
            Multimaps.add(selectorSets, set, m.identity());
            Multimaps.add(setsOf, m.identity(), set);
        } else {
            Set<IdentityId> ids = selectorSets.get(set);
            if (ids != null) {
                ids.remove(m.identity()); // the set itself stays until its own flag says it goes
            }
            Multimaps.remove(setsOf, m.identity(), set);
        }
    }

    private void policyChanged(PolicyKey key, Change<CompiledPolicy> c) {
        if (c.isRemoval()) {
            policies.remove(key);
        } else {
            policies.put(key, c.after());
        }
        for (Direction d : Direction.values()) {
            for (Family f : Family.values()) {
                ChainId.PolicyChain chain = new ChainId.PolicyChain(key, d, f);
                chainsChanged.add(chain);
                countSets(chain);
            }
        }
        for (PodKey pod : podsListing.getOrDefault(key, Set.of())) {
            markPod(pod);
        }
    }

    /**
     * A ClusterNetworkPolicy that appears, changes or goes: its chains are re-rendered, and the chains of
     * the pods that list it (whether it is held decides between a jump and a fail-closed drop).
     */
    private void clusterPolicyChanged(String name, Change<CompiledClusterPolicy> c) {
        if (c.isRemoval()) {
            clusterPolicies.remove(name);
        } else {
            clusterPolicies.put(name, c.after());
        }
        for (Direction d : Direction.values()) {
            for (Family f : Family.values()) {
                ChainId.ClusterPolicyChain chain = new ChainId.ClusterPolicyChain(name, d, f);
                chainsChanged.add(chain);
                countSets(chain);
            }
        }
        for (PodKey pod : podsListingCluster.getOrDefault(name, Set.of())) {
            markPod(pod);
        }
    }

    private void podChanged(PodKey key, Change<LocalPod> c) {
        if (c.before() != null) {
            for (Direction d : Direction.values()) {
                c.before().policies(d).forEach(p -> Multimaps.remove(podsListing, p, key));
                tierNames(c.before(), d).forEach(n -> Multimaps.remove(podsListingCluster, n, key));
            }
        }
        if (c.isRemoval()) {
            pods.remove(key);
        } else {
            pods.put(key, c.after());
            for (Direction d : Direction.values()) {
                c.after().policies(d).forEach(p -> Multimaps.add(podsListing, p, key));
                tierNames(c.after(), d).forEach(n -> Multimaps.add(podsListingCluster, n, key));
            }
        }
        countJumps(jumpsOf(c.before()), jumpsOf(c.after()));
        if (c.after() != null) {
            for (Direction d : Direction.values()) {
                for (Tier tier : new Tier[] {Tier.ADMIN, Tier.BASELINE}) {
                    c.after().tiers().of(tier, d).forEach(name -> tierSeen(name, tier));
                }
            }
        }
        markPod(key);
        for (Direction d : Direction.values()) {
            for (Family f : Family.values()) {
                chainsChanged.add(new ChainId.Dispatch(d, f));
            }
        }
    }

    /** A pod lists the policy in {@code tier}: if that is news, its chains are re-rendered (their attribution names the tier). */
    private void tierSeen(String name, Tier tier) {
        if (clusterTiers.put(name, tier) != tier) {
            for (Direction d : Direction.values()) {
                for (Family f : Family.values()) {
                    chainsChanged.add(new ChainId.ClusterPolicyChain(name, d, f));
                }
            }
        }
    }

    /** Every ClusterNetworkPolicy name a pod lists for a direction, in either tier. */
    private static List<String> tierNames(LocalPod pod, Direction d) {
        List<String> out = new ArrayList<>(pod.tiers().of(Tier.ADMIN, d));
        out.addAll(pod.tiers().of(Tier.BASELINE, d));
        return out;
    }

    /**
     * The policy chains a pod's chains may jump to (none for a pod that is gone or not judged): its
     * NetworkPolicies', its Admin tier's, and its Baseline tier's unless NetworkPolicy isolates it (then
     * Baseline is never reached). Counted from the pod's row alone: a policy listed after one that is not
     * held keeps its chain though the fail-closed drop before it means no packet gets there for now.
     */
    private static Set<ChainId> jumpsOf(LocalPod pod) {
        Set<ChainId> out = new HashSet<>();
        for (Direction d : Direction.values()) {
            for (Family f : Family.values()) {
                if (hasChain(pod, d, f)) {
                    pod.policies(d).forEach(policy -> out.add(new ChainId.PolicyChain(policy, d, f)));
                    pod.tiers().of(Tier.ADMIN, d).forEach(name -> out.add(new ChainId.ClusterPolicyChain(name, d, f)));
                    if (!pod.isolated(d)) {
                        pod.tiers().of(Tier.BASELINE, d).forEach(name -> out.add(new ChainId.ClusterPolicyChain(name, d, f)));
                    }
                }
            }
        }
        return out;
    }

    /** A policy chain that gains its first jump or loses its last one appears or goes, and with it the sets its rules name. */
    private void countJumps(Set<ChainId> was, Set<ChainId> now) {
        recount(jumps, was, now, chain -> {
            chainsChanged.add(chain);
            countSets(chain);
        });
    }

    /** Brings {@link #setRefs} up to date with what a policy chain's rules name now (nothing if it does not exist). */
    private void countSets(ChainId chain) {
        Set<SetId> now = new HashSet<>();
        if (exists(chain)) {
            for (RuleSpec rule : specs(chain)) {
                if (rule.peers() != null) {
                    now.add(rule.peers());
                }
                if (rule.port() instanceof PortMatch.NamedPort np) {
                    now.add(new SetId.NamedPort(np, chain.family()));
                }
            }
        }
        Set<SetId> was = setsNamed.getOrDefault(chain, Set.of());
        if (now.isEmpty()) {
            setsNamed.remove(chain);
        } else {
            setsNamed.put(chain, Set.copyOf(now));
        }
        recount(setRefs, was, now, this::markSet);
    }

    /**
     * Moves reference counts from what a referrer named ({@code was}) to what it names ({@code now});
     * {@code appearedOrGone} hears of each key whose count left or reached zero, after the count changed.
     */
    private static <K> void recount(Map<K, Integer> counts, Set<K> was, Set<K> now, Consumer<K> appearedOrGone) {
        for (K key : was) {
            if (!now.contains(key) && counts.merge(key, -1, Integer::sum) == 0) {
                counts.remove(key);
                appearedOrGone.accept(key);
            }
        }
        for (K key : now) {
            if (!was.contains(key) && counts.merge(key, 1, Integer::sum) == 1) {
                appearedOrGone.accept(key);
            }
        }
    }

    private boolean named(SetId set) {
        return setRefs.containsKey(set);
    }

    private void markPod(PodKey key) {
        for (Direction d : Direction.values()) {
            for (Family f : Family.values()) {
                chainsChanged.add(new ChainId.PodChain(key, d, f));
            }
        }
    }

    /** Every (set, member) an identity puts in the kernel through its addresses. */
    private Map<SetId, Set<Member>> contribution(IdentityId id) {
        Map<SetId, Set<Member>> out = new HashMap<>();
        Identity identity = identities.get(id);
        for (IpAddress ip : addressesOf.getOrDefault(id, Set.of())) {
            Family f = Family.of(ip);
            for (PeerSetKey.SelectorPeers s : setsOf.getOrDefault(id, Set.of())) {
                SetId.Selector set = new SetId.Selector(s, f);
                if (named(set)) { // a set no chain names is not in the kernel: nothing to change there
                    out.computeIfAbsent(set, k -> new HashSet<>()).add(new Member.Host(ip));
                }
            }
            if (identity != null) {
                identity.namedPorts().forEach((np, port) -> {
                    SetId.NamedPort set = new SetId.NamedPort(np, f);
                    if (named(set)) {
                        out.computeIfAbsent(set, k -> new HashSet<>())
                                .add(new Member.HostPort(ip, np.protocol(), port));
                    }
                });
            }
        }
        return out;
    }

    private void diff(Map<SetId, Set<Member>> before, Map<SetId, Set<Member>> after) {
        before.forEach((set, members) -> {
            Set<Member> now = after.getOrDefault(set, Set.of());
            members.stream().filter(m -> !now.contains(m)).forEach(m -> markMember(set, m));
        });
        after.forEach((set, members) -> {
            Set<Member> was = before.getOrDefault(set, Set.of());
            members.stream().filter(m -> !was.contains(m)).forEach(m -> markMember(set, m));
        });
    }

    private void markSet(SetId set) {
        setsChanged.add(set);
    }

    private void markMember(SetId set, Member m) {
        Multimaps.add(membersChanged, set, m);
    }

    public Dirty takeDirty() {
        Dirty d = new Dirty(Set.copyOf(setsChanged), copyMembers(), Set.copyOf(chainsChanged));
        setsChanged.clear();
        membersChanged.clear();
        chainsChanged.clear();
        return d;
    }

    private Map<SetId, Set<Member>> copyMembers() {
        Map<SetId, Set<Member>> out = new HashMap<>();
        membersChanged.forEach((k, v) -> out.put(k, Set.copyOf(v)));
        return out;
    }

    // ---- the objects, in full ---------------------------------------------------------------------------

    /** Every set that should exist. */
    public Set<SetId> sets() {
        Set<SetId> out = new LinkedHashSet<>();
        setRefs.keySet().stream().filter(this::exists).forEach(out::add);
        return out;
    }

    /** Whether the set should be in the kernel: an existing policy chain names it, and its peers are known. */
    public boolean exists(SetId set) {
        if (!named(set)) {
            return false;
        }
        if (set instanceof SetId.Selector s) {
            return selectorSets.containsKey(s.key());
        }
        if (set instanceof SetId.Cidr c) {
            return cidrSets.contains(c.key()) && Family.of(c.key().cidr()) == c.family();
        }
        return true;
    }

    /** Whether a set that should exist should hold {@code m}: a constant-time question. */
    public boolean holds(SetId set, Member m) {
        if (!exists(set)) {
            return false;
        }
        if (set instanceof SetId.Selector s && m instanceof Member.Host h) {
            IdentityId id = addresses.get(h.ip());
            return id != null && Family.of(h.ip()) == s.family() && selectorSets.get(s.key()).contains(id);
        }
        if (set instanceof SetId.Cidr c && m instanceof Member.Net) {
            return cidrMembers(c.key()).contains(m);
        }
        if (set instanceof SetId.NamedPort n && m instanceof Member.HostPort hp) {
            IdentityId id = addresses.get(hp.ip());
            Identity identity = id == null ? null : identities.get(id);
            return identity != null && Family.of(hp.ip()) == n.family() && hp.protocol() == n.port().protocol()
                    && Integer.valueOf(hp.port()).equals(identity.namedPorts().get(n.port()));
        }
        return false;
    }

    /** The members a set should hold. */
    public Set<Member> members(SetId set) {
        Set<Member> out = new HashSet<>();
        if (set instanceof SetId.Selector s) {
            for (IdentityId id : selectorSets.getOrDefault(s.key(), Set.of())) {
                for (IpAddress ip : addressesOf.getOrDefault(id, Set.of())) {
                    if (Family.of(ip) == s.family()) {
                        out.add(new Member.Host(ip));
                    }
                }
            }
        } else if (set instanceof SetId.Cidr c) {
            if (cidrSets.contains(c.key())) {
                out.addAll(cidrMembers(c.key()));
            }
        } else if (set instanceof SetId.NamedPort n) {
            identities.forEach((id, identity) -> {
                Integer port = identity.namedPorts().get(n.port());
                if (port != null && named(n)) {
                    for (IpAddress ip : addressesOf.getOrDefault(id, Set.of())) {
                        if (Family.of(ip) == n.family()) {
                            out.add(new Member.HostPort(ip, n.port().protocol(), port));
                        }
                    }
                }
            });
        }
        return out;
    }

    /**
     * An ipBlock's prefixes: the CIDR, and each except as excluded. A /0 becomes its two /1 halves,
     * which hold the same addresses, because ipset's hash:net cannot hold a /0.
     */
    static List<Member> cidrMembers(PeerSetKey.CidrPeers key) {
        List<Member> out = new ArrayList<>();
        Cidr cidr = key.cidr();
        if (cidr.prefixLength() == 0) {
            IpAddress zero = cidr.network();
            IpAddress half = zero.v6() ? IpAddress.v6(Long.MIN_VALUE, 0) : IpAddress.v4(0x80000000);
            out.add(new Member.Net(new Cidr(zero, 1), false));
            out.add(new Member.Net(new Cidr(half, 1), false));
        } else {
            out.add(new Member.Net(cidr, false));
        }
        for (Cidr e : key.except()) {
            out.add(new Member.Net(e, true));
        }
        return out;
    }

    /** Every chain that should exist. */
    public Set<ChainId> chains() {
        Set<ChainId> out = new LinkedHashSet<>();
        for (Direction d : Direction.values()) {
            for (Family f : Family.values()) {
                out.add(new ChainId.Dispatch(d, f));
            }
        }
        jumps.keySet().stream().filter(this::exists).forEach(out::add);
        pods.keySet().forEach(key -> {
            for (Direction d : Direction.values()) {
                for (Family f : Family.values()) {
                    ChainId.PodChain c = new ChainId.PodChain(key, d, f);
                    if (exists(c)) {
                        out.add(c);
                    }
                }
            }
        });
        return out;
    }

    public boolean exists(ChainId chain) {
        if (chain instanceof ChainId.Dispatch) {
            return true;
        }
        if (chain instanceof ChainId.PolicyChain p) {
            CompiledPolicy policy = policies.get(p.policy());
            return policy != null && policy.isolates(p.direction()) && jumps.containsKey(p);
        }
        if (chain instanceof ChainId.ClusterPolicyChain p) {
            return hasRules(p.policy(), p.direction()) && jumps.containsKey(p);
        }
        ChainId.PodChain c = (ChainId.PodChain) chain;
        return hasChain(pods.get(c.pod()), c.direction(), c.family());
    }

    /** Whether the pod has a chain for the direction and family: judged for it, with an address in it. */
    private static boolean hasChain(LocalPod pod, Direction d, Family f) {
        return pod != null && pod.judged(d) && pod.ips().stream().anyMatch(ip -> Family.of(ip) == f);
    }

    /** Whether the model holds the ClusterNetworkPolicy and it has rules for the direction. */
    private boolean hasRules(String clusterPolicy, Direction d) {
        CompiledClusterPolicy policy = clusterPolicies.get(clusterPolicy);
        return policy != null && !policy.rules(d).isEmpty();
    }

    private List<RuleSpec> specs(ChainId chain) {
        if (chain instanceof ChainId.ClusterPolicyChain c) {
            return rules(c);
        }
        return rules((ChainId.PolicyChain) chain);
    }

    /** A policy chain's rules, one per (peer, port), in rule order; empty admits nothing. */
    public List<RuleSpec> rules(ChainId.PolicyChain chain) {
        CompiledPolicy policy = policies.get(chain.policy());
        List<RuleSpec> out = new ArrayList<>();
        if (policy == null || !policy.isolates(chain.direction())) {
            return out;
        }
        for (CompiledRule r : policy.rules(chain.direction())) {
            expand(out, r.index(), RuleAction.ACCEPT, r.anyPeer(), r.peers(), r.anyPort(), r.ports(), chain.family());
        }
        return out;
    }

    /**
     * A ClusterNetworkPolicy chain's rules, one per (peer, port), in rule order, each with its rule's
     * action: the first that matches decides. Empty matches nothing (the packet goes on in the pod chain).
     */
    public List<RuleSpec> rules(ChainId.ClusterPolicyChain chain) {
        CompiledClusterPolicy policy = clusterPolicies.get(chain.policy());
        List<RuleSpec> out = new ArrayList<>();
        if (policy == null) {
            return out;
        }
        for (CompiledClusterRule r : policy.rules(chain.direction())) {
            expand(out, r.index(), r.action(), r.anyPeer(), r.peers(), r.anyPort(), r.ports(), chain.family());
        }
        return out;
    }

    /** One compiled rule as specs in {@code family}: an ipBlock of the other family matches nothing in this one. */
    private static void expand(List<RuleSpec> out, int index, RuleAction action, boolean anyPeer, List<PeerSetKey> peerKeys,
                               boolean anyPort, List<PortMatch> portMatches, Family family) {
        List<SetId> peers = new ArrayList<>();
        if (anyPeer) {
            peers.add(null);
        } else {
            for (PeerSetKey k : peerKeys) {
                if (k instanceof PeerSetKey.SelectorPeers s) {
                    peers.add(new SetId.Selector(s, family));
                } else if (k instanceof PeerSetKey.CidrPeers c && Family.of(c.cidr()) == family) {
                    peers.add(new SetId.Cidr(c, family));
                }
            }
        }
        List<PortMatch> ports = new ArrayList<>();
        if (anyPort) {
            ports.add(null);
        } else {
            ports.addAll(portMatches);
        }
        for (SetId peer : peers) {
            for (PortMatch port : ports) {
                out.add(new RuleSpec(index, action, peer, port));
            }
        }
    }

    /**
     * What a pod chain consults, in order. {@code tiered}: a ClusterNetworkPolicy has a say in this
     * direction (else the chain is a NetworkPolicy one, rendered as it always was). {@code admin}: the
     * Admin tier's policies that are held and have rules here, in order, up to the first one not held;
     * {@code adminFailsClosed}: there was such a one, and whatever reaches its place is dropped (a Pass
     * before it skips the drop with the rest of the tier). {@code policies}: the NetworkPolicies, when
     * they isolate the pod (they decide, and Baseline is never reached). {@code baseline} and
     * {@code baselineFailsClosed}: likewise for the Baseline tier, consulted only when not isolated.
     */
    public record PodSteps(boolean tiered, List<String> admin, boolean adminFailsClosed, boolean isolated, List<PolicyKey> policies,
                           List<String> baseline, boolean baselineFailsClosed) {}

    /** The steps of a pod chain. */
    public PodSteps steps(ChainId.PodChain chain) {
        LocalPod pod = pods.get(chain.pod());
        if (pod == null) {
            return new PodSteps(false, List.of(), false, false, List.of(), List.of(), false);
        }
        Direction d = chain.direction();
        List<String> admin = new ArrayList<>();
        boolean adminFailsClosed = held(pod.tiers().of(Tier.ADMIN, d), d, admin);
        boolean isolated = pod.isolated(d);
        List<String> baseline = new ArrayList<>();
        boolean baselineFailsClosed = !isolated && held(pod.tiers().of(Tier.BASELINE, d), d, baseline);
        return new PodSteps(pod.tiers().any(d), admin, adminFailsClosed, isolated, policies(chain), baseline, baselineFailsClosed);
    }

    /** Copies into {@code out} the names held with rules for the direction, up to the first not held; whether there was one. */
    private boolean held(List<String> names, Direction d, List<String> out) {
        for (String name : names) {
            if (!clusterPolicies.containsKey(name)) {
                return true;
            }
            if (hasRules(name, d)) {
                out.add(name);
            }
        }
        return false;
    }

    /** The policies a pod chain consults, in order: those the pod lists for the direction and the model holds. */
    public List<PolicyKey> policies(ChainId.PodChain chain) {
        LocalPod pod = pods.get(chain.pod());
        if (pod == null) {
            return List.of();
        }
        List<PolicyKey> out = new ArrayList<>();
        for (PolicyKey p : pod.policies(chain.direction())) {
            CompiledPolicy policy = policies.get(p);
            if (policy != null && policy.isolates(chain.direction())) {
                out.add(p);
            }
        }
        return out;
    }

    /** Each address of a local pod judged for the direction, in the family, with its pod. */
    public SortedMap<IpAddress, PodKey> dispatch(ChainId.Dispatch chain) {
        SortedMap<IpAddress, PodKey> out = new TreeMap<>();
        pods.forEach((key, pod) -> {
            if (pod.judged(chain.direction())) {
                for (IpAddress ip : pod.ips()) {
                    if (Family.of(ip) == chain.family()) {
                        out.put(ip, key);
                    }
                }
            }
        });
        return out;
    }

    // ---- what flow attribution names ----------------------------------------------------------------------

    /** The NetworkPolicies that isolate the pod for the chain's direction, held or not: a default deny's attribution. */
    public List<PolicyKey> isolating(ChainId.PodChain chain) {
        LocalPod pod = pods.get(chain.pod());
        return pod == null ? List.of() : pod.policies(chain.direction());
    }

    /** The tier pods list a ClusterNetworkPolicy in (Admin if none does: a chain exists only while one does). */
    public Tier clusterTier(String name) {
        return clusterTiers.getOrDefault(name, Tier.ADMIN);
    }

    /** The rule of a held ClusterNetworkPolicy with this index for the direction, or null. */
    public CompiledClusterRule clusterRule(String name, Direction d, int index) {
        CompiledClusterPolicy policy = clusterPolicies.get(name);
        if (policy == null) {
            return null;
        }
        return policy.rules(d).stream().filter(r -> r.index() == index).findFirst().orElse(null);
    }

    /** The first ClusterNetworkPolicy of the pod's tier list for the chain's direction that the model does not hold, or null. */
    public String unheld(ChainId.PodChain chain, Tier tier) {
        LocalPod pod = pods.get(chain.pod());
        if (pod == null) {
            return null;
        }
        return pod.tiers().of(tier, chain.direction()).stream().filter(n -> !clusterPolicies.containsKey(n)).findFirst().orElse(null);
    }

    /** NetworkPolicies and ClusterNetworkPolicies held. */
    public int policyCount() {
        return policies.size() + clusterPolicies.size();
    }
}
