package io.npmagent.bpf.model;

import io.npmagent.bpf.maps.EndpointMap;
import io.npmagent.bpf.maps.EndpointMap.Judged;
import io.npmagent.bpf.maps.IpcacheMap;
import io.npmagent.bpf.maps.PolicyMap;
import io.npmagent.dataplane.desired.CompiledClusterPolicy;
import io.npmagent.dataplane.desired.CompiledClusterRule;
import io.npmagent.dataplane.desired.CompiledPolicy;
import io.npmagent.dataplane.desired.CompiledRule;
import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.desired.DesiredState;
import io.npmagent.dataplane.desired.Identity;
import io.npmagent.dataplane.desired.IdentityId;
import io.npmagent.dataplane.desired.LocalPod;
import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.desired.PortMatch;
import io.npmagent.dataplane.eval.ClusterRuleRef;
import io.npmagent.dataplane.flow.Attribution;
import io.npmagent.dataplane.flow.AttributionRefs;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Tier;
import io.npmagent.dataplane.tier.RuleAction;
import io.npmagent.dataplane.util.Multimaps;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BiConsumer;

/**
 * The desired state as eBPF map contents: the one place that decides what each map holds.
 *
 * <p><b>Peer identities.</b> The ipcache is one longest-prefix-match trie over every pod address
 * (/32, /128) and every prefix an ipBlock or except names ("atoms": an address's atom is the longest
 * such prefix that holds it). A pod address maps to its <i>peer class</i>: the pair of its pod
 * identity and its atom, so that a selector peer (by identity) and an ipBlock peer (by address) each
 * admit exactly the pods they should, even when an ipBlock covers some of one identity's pods and not
 * the others. A class with no atom is the pod identity's own number; others get numbers from
 * 0x20000000 (pod classes) and 0x40000000 (atoms, for addresses that are no pod), kept while used.
 * A pod address's ipcache value carries its atom's number too ({@link IpcacheMap.Value}; none for a
 * class with no atom, and for an atom prefix's own entry): the programs look up the class, then, where
 * it has no entry, the atom, then ANY. So a pod class needs entries only where it differs from its atom,
 * and an ipBlock holding many pods costs entries per atom, not per pod.
 *
 * <p><b>Policy entries.</b> Per local pod and direction its policies isolate, the union of its rules:
 * each admitted peer (or ANY for a rule without peers) times each port (an any-protocol entry for a
 * rule without ports; a range as aligned prefixes; a named port resolved on the destination: the pod
 * itself for ingress, each peer class's identity for egress). A selector admits its members' classes;
 * an ipBlock the atoms inside it and outside every except (every except is itself an atom, so atoms
 * never straddle one), which cover the pod classes in them through the fallback, but for an egress
 * named port, which lists each pod class in them serving the name.
 *
 * <p><b>ClusterNetworkPolicy tiers: tables, priority in Java.</b> A pod side a ClusterNetworkPolicy
 * has a say in (a non-empty list of {@link LocalPod#tiers()}) walks, in the programs, its Admin table,
 * its NetworkPolicy entries where they isolate it, its Baseline table, then allows. A <i>tier table</i>
 * is one list (tier, direction, the policies in the order they are tried), shared by every pod side
 * that walks the same list, its entries keyed by its number (from {@link #TABLE_BASE}) where a pod's are
 * keyed by its endpoint id. Per table the tier's walk ({@link TierWalk}: rules in order, the first
 * matching decides: allow, deny, or next for a Pass or no match) is computed here for ANY, for each atom
 * inside a rule's ipBlock, and for each pod class whose walk may differ from its atom's (a selector of
 * the list holds its identity, or an egress rule names a port it serves), as a verdict per protocol and
 * port, and written where it differs from what the lookup falls back to: ANY's from next, an atom's from
 * ANY's, a pod class's from its atom's (ANY's for a class in no atom). Any other pod class walks as its
 * atom does and gets nothing. So priority and rule order live only here, in the order a walk is
 * computed: a priority edit (a new order in the pods' lists: a new table) or a rule edit (the tables
 * listing it redone) renders new verdicts, which land with the batch's flip like any entry. A pod's
 * NetworkPolicy entries are the same whether or not a ClusterNetworkPolicy selects it.
 *
 * <p><b>The node's own addresses</b> ({@link #nodeAddresses}) read as the node whatever else holds them:
 * HOST, or in an atom that atom's node identity (from {@link #NODE_BASE}). NetworkPolicy always admits
 * them, both ways (kubelet's probes, node-local services); an egress table's entries for a node identity
 * (its rules whose CIDR peers hold the atom, where the tier does not hand on) are the only ones the
 * programs read for it.
 *
 * <p><b>Cost follows the change.</b> A delta costs what depends on it, not the cluster: an address
 * that came, went or moved changes its own ipcache entry; a peer class that came or went, or an
 * identity joining or leaving a selector set, adds or removes just that class's entries in the rules
 * that make entries for it: selectors holding its identity and egress named ports; never an ipBlock
 * alone (each pod's entries are counted by the rules that make them, so an entry another rule
 * still makes stays); each tier table walks that class alone. A policy or pod row that changed, a set
 * that came or went, and any identity change for pods and tables whose policies name ports redo those
 * pods or tables whole. Only a change of the atoms
 * themselves (an ipBlock or except prefix that was not there, or is no longer) redoes everything,
 * since every address may then move to another class.
 */
public final class BpfModel {
    public static final int ANY = -1;
    public static final int WORLD = 0;
    /** The node's own addresses no ipBlock or {@code networks} prefix holds: always admitted. */
    public static final int HOST = 1;
    /**
     * The node's own addresses inside an atom: one identity per atom, from here to the pod classes' base.
     * NetworkPolicy admits them as HOST; a ClusterNetworkPolicy egress rule whose {@code networks} peer holds the atom judges them.
     */
    public static final int NODE_BASE = 0x10000000;
    private static final int POD_CLASS_BASE = 0x20000000;
    private static final int ATOM_BASE = 0x40000000;
    /** Tier tables take the policy map's owner field from here; local pods' endpoint ids count from 1. */
    static final int TABLE_BASE = 0x40000000;

    /** The numbers written beside verdicts, which flow reports carry back (verdicts.h). */
    private final AttributionRefs refs;
    private final Map<IdentityId, Identity> identities = new HashMap<>();
    private final Map<IpAddress, IdentityId> addresses = new HashMap<>();
    private final Map<PeerSetKey, Set<IdentityId>> sets = new HashMap<>();
    private final Map<PolicyKey, CompiledPolicy> policies = new HashMap<>();
    private final Map<PodKey, LocalPod> pods = new HashMap<>();
    private final Map<String, CompiledClusterPolicy> clusterPolicies = new HashMap<>();

    private final Map<PodKey, Integer> endpointIds = new HashMap<>();
    private final Map<List<Object>, Integer> classIds = new HashMap<>();
    private final Map<Cidr, Integer> atomIds = new HashMap<>();
    private final Map<Cidr, Integer> nodeIds = new HashMap<>();
    /** The node's own addresses, as the backend last found them. */
    private Set<IpAddress> nodeAddresses = Set.of();
    private int nextEndpoint = 1;
    private int nextClass = POD_CLASS_BASE;
    private int nextAtom = ATOM_BASE;
    private int nextNode = NODE_BASE;

    // What a pod's entries depend on, to find the pods a delta changes.
    private final Map<PolicyKey, Set<PodKey>> podsByPolicy = new HashMap<>();
    private final Map<PeerSetKey, Set<PolicyKey>> policiesBySet = new HashMap<>();
    /** The selector sets each identity is a member of. */
    private final Map<IdentityId, Set<PeerSetKey>> setsOfIdentity = new HashMap<>();
    /** Policies with a named port in some rule: their pods depend on identities' named ports and on every class. */
    private final Set<PolicyKey> namedPortPolicies = new HashSet<>();
    /** The local pods that list each ClusterNetworkPolicy, in any tier and direction. */
    private final Map<String, Set<PodKey>> podsByClusterPolicy = new HashMap<>();
    private final Map<PeerSetKey, Set<String>> clusterPoliciesBySet = new HashMap<>();
    /** ClusterNetworkPolicies with a named port in some rule (their pods are redone when identities change). */
    private final Set<String> namedPortClusterPolicies = new HashSet<>();

    // The last render, kept so the next one redoes only what changed.
    private boolean renderAll = true;
    private final Set<PodKey> dirtyPods = new HashSet<>();
    private List<Cidr> atoms = List.of();
    private Map<Cidr, IpcacheMap.Value> ipcache = new LinkedHashMap<>();
    private Map<IdentityId, Set<Integer>> classesOf = new HashMap<>();
    private Map<Integer, IdentityId> identityOfClass = new HashMap<>();
    private Map<Cidr, Set<Integer>> podClassesInAtom = new HashMap<>();
    /** The atom of each pod class (those from POD_CLASS_BASE; an identity's own number has none). */
    private Map<Integer, Cidr> atomOfClass = new HashMap<>();
    /** Per peer class, the addresses in it: a class lives while it has one. */
    private Map<Integer, Integer> addressesInClass = new HashMap<>();
    /** The ipcache prefixes an address change moved since the last render. */
    private final Set<Cidr> dirtyIpcache = new HashSet<>();
    private final Map<PodKey, Rendered.Endpoint> endpoints = new LinkedHashMap<>();
    /**
     * Per pod no ClusterNetworkPolicy selects, each entry (all allow) with the number of rules that make
     * it: it lives while one does.
     */
    private final Map<PodKey, Map<PolicyEntry, Integer>> entriesByPod = new HashMap<>();
    /** The tier tables pod sides use, each with the number of sides using it: it lives while one does. */
    private final Map<TableKey, Table> tables = new HashMap<>();
    /** The tables each local pod's sides use. */
    private final Map<PodKey, List<TableKey>> tablesOfPod = new HashMap<>();
    /** Tables to redo whole at the next render: a policy of theirs, a set it names or a named port changed. */
    private final Set<TableKey> dirtyTables = new HashSet<>();
    /** Each table's number, kept while the table is (a render from scratch keeps them too). */
    private final Map<TableKey, Integer> tableIds = new HashMap<>();
    private int nextTable = TABLE_BASE;
    /** Entries a peer class's coming or going added or removed since the last render. */
    private final Set<PolicyEntry> dirtyEntries = new HashSet<>();
    /** Every entry of pods and tables, with its verdict ({@link PolicyMap#ALLOW}, {@link PolicyMap#DENY} or {@link PolicyMap#NEXT}). */
    private final Map<PolicyEntry, Integer> entries = new HashMap<>();

    /** A model whose attribution numbers are its own. */
    public BpfModel() {
        this(new AttributionRefs());
    }

    /** A model writing the numbers {@code refs} gives (the backend's, which its flow reports decode with). */
    public BpfModel(AttributionRefs refs) {
        this.refs = refs;
    }

    /** The numbers this model writes beside verdicts. */
    public AttributionRefs refs() {
        return refs;
    }

    /**
     * Takes a delta and notes what the next render must redo: everything when the ipBlock atoms change
     * (every address may move to another peer class); otherwise the ipcache entries of the addresses
     * that changed, and the pods whose rows, policies or peer sets changed, or whose rules admit a peer
     * class that came or went.
     */
    public void apply(DesiredDelta d) {
        d.pods().forEach((k, c) -> {
            index(podsByPolicy, c.before(), k, false);
            index(podsByPolicy, c.after(), k, true);
            indexTiers(c.before(), k, false);
            indexTiers(c.after(), k, true);
            dirtyPods.add(k);
        });
        d.clusterPolicies().forEach((name, c) -> {
            if (c.before() != null) {
                c.before().peerSets().forEach(set -> Multimaps.remove(clusterPoliciesBySet, set, name));
            }
            if (c.after() != null) {
                c.after().peerSets().forEach(set -> Multimaps.add(clusterPoliciesBySet, set, name));
            }
            boolean namedPorts = c.after() != null && namesAPort(c.after());
            if (namedPorts != namedPortClusterPolicies.contains(name)) {
                // an ingress table is per pod identity where its policies name ports: the pods' tables change
                dirtyPods.addAll(podsByClusterPolicy.getOrDefault(name, Set.of()));
            }
            if (namedPorts) {
                namedPortClusterPolicies.add(name);
            } else {
                namedPortClusterPolicies.remove(name);
            }
            tables.keySet().forEach(t -> {
                if (t.names().contains(name)) {
                    dirtyTables.add(t);
                }
            });
        });
        d.policies().forEach((k, c) -> {
            if (c.before() != null) {
                c.before().peerSets().forEach(set -> Multimaps.remove(policiesBySet, set, k));
            }
            if (c.after() != null) {
                c.after().peerSets().forEach(set -> Multimaps.add(policiesBySet, set, k));
            }
            if (c.after() != null && namesAPort(c.after())) {
                namedPortPolicies.add(k);
            } else {
                namedPortPolicies.remove(k);
            }
            dirtyPods.addAll(podsByPolicy.getOrDefault(k, Set.of()));
        });
        d.peerSets().keySet().forEach(set -> {
            dirtyPodsOf(set);
            tables.keySet().forEach(t -> {
                if (names(t, set)) {
                    dirtyTables.add(t);
                }
            });
        });
        if (!d.identities().isEmpty()) { // named ports resolve through identities: those pods and tables are redone whole
            namedPortPolicies.forEach(pk -> dirtyPods.addAll(podsByPolicy.getOrDefault(pk, Set.of())));
            tables.keySet().forEach(t -> {
                if (t.names().stream().anyMatch(namedPortClusterPolicies::contains)) {
                    dirtyTables.add(t);
                }
            });
        }

        d.identities().forEach((k, c) -> put(identities, k, c.after()));
        d.addresses().forEach((k, c) -> put(addresses, k, c.after()));
        d.peerSets().forEach((k, present) -> {
            if (present) {
                sets.putIfAbsent(k, new HashSet<>());
            } else {
                Set<IdentityId> gone = sets.remove(k);
                if (gone != null) {
                    gone.forEach(id -> Multimaps.remove(setsOfIdentity, id, k));
                }
            }
        });
        d.members().forEach((m, present) -> {
            Set<IdentityId> members = sets.get(m.set());
            if (members != null) {
                // the rules naming the set gain or lose the identity's classes, counted rule by rule
                List<Admission> admissions = renderAll ? List.of() : admissions(m.set(), m.identity());
                if (present) {
                    members.add(m.identity());
                    Multimaps.add(setsOfIdentity, m.identity(), m.set());
                } else {
                    members.remove(m.identity());
                    Multimaps.remove(setsOfIdentity, m.identity(), m.set());
                }
                admissions.forEach(a -> a.recount(this));
                if (!renderAll) {
                    // the tables naming the set walk the identity's classes anew
                    tables.forEach((t, table) -> {
                        if (!dirtyTables.contains(t) && names(t, m.set())) {
                            classesOf.getOrDefault(m.identity(), Set.of()).forEach(cls -> walkClass(t, table, cls, true));
                        }
                    });
                }
            }
        });
        d.policies().forEach((k, c) -> put(policies, k, c.after()));
        d.clusterPolicies().forEach((k, c) -> put(clusterPolicies, k, c.after()));
        d.pods().forEach((k, c) -> put(pods, k, c.after()));

        if (!renderAll && d.peerSets().keySet().stream().anyMatch(k -> k instanceof PeerSetKey.CidrPeers) && !atoms().equals(atoms)) {
            renderAll = true; // addresses change atoms, so peer classes: the one change redone whole
        }
        if (renderAll) {
            return; // the next render redoes classes and the ipcache from the rows
        }
        d.addresses().forEach((ip, c) -> {
            unclassify(ip);
            if (c.after() != null) {
                classify(ip, c.after());
            }
        });
    }

    /**
     * The node's own addresses, as found on the node: they read as the node in the ipcache, whatever
     * else holds them, and the egress tier tables are redone at the next render (their rules may hold a
     * new address, or no longer one that went).
     */
    public void nodeAddresses(Set<IpAddress> now) {
        if (now.equals(nodeAddresses)) {
            return;
        }
        nodeAddresses = Set.copyOf(now);
        tables.keySet().forEach(t -> {
            if (t.direction() == Direction.EGRESS) {
                dirtyTables.add(t);
            }
        });
    }

    /**
     * The identity each of the node's addresses reads as: its atom's node identity, or HOST in none (no
     * ClusterNetworkPolicy rule can name it then). Numbers are kept while their atom is.
     */
    private Map<Cidr, Integer> nodeIdentities() {
        Map<Cidr, Integer> out = new HashMap<>();
        for (IpAddress ip : nodeAddresses) {
            Cidr atom = atomOf(ip, atoms);
            out.put(Cidr.host(ip), atom == null ? HOST : nodeId(atom));
        }
        return out;
    }

    /**
     * An address joins the class of its identity and atom: its ipcache entry, and the class if it is new.
     * Called for an address in no class ({@link #unclassify} first), so a delta applied twice counts once.
     */
    private void classify(IpAddress ip, IdentityId id) {
        Cidr atom = atomOf(ip, atoms);
        int cls = atom == null ? id.value() : classIds.computeIfAbsent(List.of(id, atom), k -> nextClass++);
        ipcache.put(Cidr.host(ip), new IpcacheMap.Value(cls, atom == null ? IpcacheMap.NO_ATOM : atomId(atom)));
        dirtyIpcache.add(Cidr.host(ip));
        if (addressesInClass.merge(cls, 1, Integer::sum) == 1) {
            classesOf.computeIfAbsent(id, k -> new HashSet<>()).add(cls);
            identityOfClass.put(cls, id);
            if (atom != null) {
                podClassesInAtom.computeIfAbsent(atom, k -> new HashSet<>()).add(cls);
                atomOfClass.put(cls, atom);
            }
            classCameOrWent(id, cls, atom, 1);
        }
    }

    /**
     * An address leaves the class its ipcache entry names, if any (an entry from {@link #ATOM_BASE} up is
     * its atom's, no class): the entry goes, back to the atom's if the address is an atom itself, and the
     * class goes with its last address.
     */
    private void unclassify(IpAddress ip) {
        Cidr host = Cidr.host(ip);
        IpcacheMap.Value was = ipcache.get(host);
        if (was == null || was.identity() >= ATOM_BASE) {
            return;
        }
        int cls = was.identity();
        ipcache.remove(host);
        dirtyIpcache.add(host);
        if (atomIds.containsKey(host)) {
            ipcache.put(host, IpcacheMap.Value.of(atomIds.get(host)));
        }
        if (addressesInClass.merge(cls, -1, Integer::sum) > 0) {
            return;
        }
        addressesInClass.remove(cls);
        IdentityId id = identityOfClass.get(cls);
        Cidr atom = atomOf(ip, atoms);
        classCameOrWent(id, cls, atom, -1);
        identityOfClass.remove(cls);
        Multimaps.remove(classesOf, id, cls);
        if (atom != null) {
            Multimaps.remove(podClassesInAtom, atom, cls);
            classIds.remove(List.of(id, atom));
            atomOfClass.remove(cls);
        }
    }

    /**
     * Counts a class that came (after it joined the indexes) or is going (before it leaves them) in or
     * out of the entries of the pods whose rules may make entries for it: those of policies with a
     * selector peer {@code id} is in, or with a named port (an egress named port lists every class that
     * serves it, to any peer or inside an ipBlock). An ipBlock peer alone makes none: the class falls back
     * to its atom's entries, so pods that only an ipBlock ties to the class are not looked at. Each tier
     * table walks the class alone (there are few tables).
     */
    private void classCameOrWent(IdentityId id, int cls, Cidr atom, int delta) {
        Set<PodKey> users = new HashSet<>();
        setsOfIdentity.getOrDefault(id, Set.of()).forEach(set -> podsUsing(set, users));
        namedPortPolicies.forEach(pk -> users.addAll(podsByPolicy.getOrDefault(pk, Set.of())));
        countClass(users, id, cls, atom, delta);
        tables.forEach((t, table) -> {
            if (!dirtyTables.contains(t)) {
                walkClass(t, table, cls, delta > 0);
            }
        });
    }

    private static boolean namesAPort(CompiledPolicy policy) {
        for (Direction d : Direction.values()) {
            for (CompiledRule rule : policy.rules(d)) {
                if (rule.ports().stream().anyMatch(m -> m instanceof PortMatch.NamedPort)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean namesAPort(CompiledClusterPolicy policy) {
        for (Direction d : Direction.values()) {
            for (CompiledClusterRule rule : policy.rules(d)) {
                if (rule.ports().stream().anyMatch(m -> m instanceof PortMatch.NamedPort)) {
                    return true;
                }
            }
        }
        return false;
    }

    private void indexTiers(LocalPod row, PodKey pod, boolean add) {
        if (row == null) {
            return;
        }
        for (Tier tier : CLUSTER_TIERS) {
            for (Direction d : Direction.values()) {
                for (String name : row.tiers().of(tier, d)) {
                    if (add) {
                        Multimaps.add(podsByClusterPolicy, name, pod);
                    } else {
                        Multimaps.remove(podsByClusterPolicy, name, pod);
                    }
                }
            }
        }
    }

    private static final List<Tier> CLUSTER_TIERS = List.of(Tier.ADMIN, Tier.BASELINE);

    private static void index(Map<PolicyKey, Set<PodKey>> podsByPolicy, LocalPod row, PodKey pod, boolean add) {
        if (row == null) {
            return;
        }
        for (Direction d : Direction.values()) {
            for (PolicyKey pk : row.policies(d)) {
                if (add) {
                    Multimaps.add(podsByPolicy, pk, pod);
                } else {
                    Multimaps.remove(podsByPolicy, pk, pod);
                }
            }
        }
    }

    private void dirtyPodsOf(PeerSetKey set) {
        podsUsing(set, dirtyPods);
    }

    /** The local pods of every NetworkPolicy with a rule naming {@code set}, into {@code out}. */
    private void podsUsing(PeerSetKey set, Set<PodKey> out) {
        for (PolicyKey pk : policiesBySet.getOrDefault(set, Set.of())) {
            out.addAll(podsByPolicy.getOrDefault(pk, Set.of()));
        }
    }

    /** Whether a policy of table {@code t} has a rule naming {@code set}. */
    private boolean names(TableKey t, PeerSetKey set) {
        Set<String> naming = clusterPoliciesBySet.getOrDefault(set, Set.of());
        return t.names().stream().anyMatch(naming::contains);
    }

    /** The rows as a snapshot, for tests. */
    public DesiredState state() {
        Map<PeerSetKey, SortedSet<IdentityId>> s = new HashMap<>();
        sets.forEach((k, v) -> s.put(k, new TreeSet<>(v)));
        return new DesiredState(new TreeMap<>(identities), new TreeMap<>(addresses), new TreeMap<>(s),
                new TreeMap<>(policies), new TreeMap<>(clusterPolicies), new TreeMap<>(pods));
    }

    private static <K, V> void put(Map<K, V> m, K k, V v) {
        if (v == null) {
            m.remove(k);
        } else {
            m.put(k, v);
        }
    }

    /**
     * The maps' contents as the rows now want them (live views: valid until the next {@link #apply}),
     * with what changed since the last render.
     */
    public Rendered render() {
        Rendered.Changes changes;
        if (renderAll) {
            renderAll();
            changes = Rendered.Changes.ALL;
        } else {
            Set<PolicyEntry> touched = new HashSet<>(dirtyEntries);
            for (TableKey t : dirtyTables) {
                Table table = tables.get(t);
                if (table != null) {
                    renderTable(t, table, touched);
                }
            }
            for (PodKey pod : dirtyPods) {
                touched.addAll(renderPod(pod));
            }
            dropUnusedTables(touched);
            changes = new Rendered.Changes(false, Set.copyOf(dirtyPods), touched, Set.copyOf(dirtyIpcache));
        }
        renderAll = false;
        dirtyTables.clear();
        dirtyPods.clear();
        dirtyIpcache.clear();
        dirtyEntries.clear();
        return new Rendered(Collections.unmodifiableMap(ipcache), nodeIdentities(), Collections.unmodifiableMap(endpoints),
                Collections.unmodifiableMap(entries), changes);
    }

    /** A render that redoes everything, whatever changed: what the incremental one must equal. */
    Rendered renderFromScratch() {
        renderAll = true;
        return render();
    }

    /** Everything anew: atoms, peer classes, the ipcache, and every pod's endpoint and entries. */
    private void renderAll() {
        atoms = atoms();
        ipcache = new LinkedHashMap<>();
        classesOf = new HashMap<>();
        identityOfClass = new HashMap<>();
        podClassesInAtom = new HashMap<>();
        addressesInClass = new HashMap<>();
        atomOfClass = new HashMap<>();
        Set<List<Object>> usedClasses = new HashSet<>();
        for (Cidr a : atoms) {
            ipcache.put(a, IpcacheMap.Value.of(atomId(a)));
        }
        addresses.forEach((ip, id) -> {
            Cidr atom = atomOf(ip, atoms);
            int cls;
            if (atom == null) {
                cls = id.value();
            } else {
                List<Object> key = List.of(id, atom);
                usedClasses.add(key);
                cls = classIds.computeIfAbsent(key, k -> nextClass++);
                podClassesInAtom.computeIfAbsent(atom, k -> new HashSet<>()).add(cls);
                atomOfClass.put(cls, atom);
            }
            ipcache.put(Cidr.host(ip), new IpcacheMap.Value(cls, atom == null ? IpcacheMap.NO_ATOM : atomId(atom)));
            classesOf.computeIfAbsent(id, k -> new HashSet<>()).add(cls);
            identityOfClass.put(cls, id);
            addressesInClass.merge(cls, 1, Integer::sum);
        });
        classIds.keySet().retainAll(usedClasses);
        atomIds.keySet().retainAll(atoms);
        nodeIds.keySet().retainAll(atoms);

        endpointIds.keySet().retainAll(pods.keySet());
        endpoints.clear();
        entriesByPod.clear();
        tables.clear();
        tablesOfPod.clear();
        entries.clear();
        for (PodKey pod : pods.keySet()) {
            renderPod(pod);
        }
        tableIds.keySet().retainAll(tables.keySet());
    }

    /**
     * Redoes one pod's endpoint and NetworkPolicy entries, and takes the tier tables its sides use now
     * (made where no pod used them yet) before it lets go of the ones before; returns the entries it
     * dropped and the ones it has now, and those of the tables it made.
     */
    private Set<PolicyEntry> renderPod(PodKey key) {
        Set<PolicyEntry> touched = new HashSet<>();
        unlist(entriesByPod.remove(key), touched);
        List<TableKey> before = tablesOfPod.remove(key);
        LocalPod pod = pods.get(key);
        if (pod == null) {
            endpoints.remove(key);
            endpointIds.remove(key);
            release(before);
            return touched;
        }
        int endpoint = endpointIds.computeIfAbsent(key, k -> nextEndpoint++);
        Judged[] judged = new Judged[2];
        int[] table = new int[4];
        List<TableKey> used = new ArrayList<>();
        for (Direction d : Direction.values()) {
            int dir = d == Direction.INGRESS ? 0 : 1;
            if (!pod.tiers().any(d)) {
                judged[dir] = Judged.of(pod.isolated(d));
                continue;
            }
            judged[dir] = pod.isolated(d) ? Judged.MISS_DENIED : Judged.MISS_ALLOWED;
            for (int tier = 0; tier < CLUSTER_TIERS.size(); tier++) {
                List<String> names = pod.tiers().of(CLUSTER_TIERS.get(tier), d);
                if (!names.isEmpty()) {
                    // an ingress rule's named port resolves on the pod itself: such lists are per pod identity
                    boolean self = d == Direction.INGRESS && names.stream().anyMatch(namedPortClusterPolicies::contains);
                    TableKey t = new TableKey(CLUSTER_TIERS.get(tier), d, names, self ? pod.identity() : null);
                    table[dir * 2 + tier] = acquire(t, touched).id;
                    used.add(t);
                }
            }
        }
        tablesOfPod.put(key, used);
        release(before);
        endpoints.put(key, new Rendered.Endpoint(endpoint, pod.ips(), judged[0], judged[1], pod.bandwidth(), pod.congestion(),
                new EndpointMap.Tiers(table[0], table[1], table[2], table[3]),
                new EndpointMap.Isolation(isolation(pod, Direction.INGRESS), isolation(pod, Direction.EGRESS))));
        Map<PolicyEntry, Integer> now = new HashMap<>();
        Set<PolicyEntry> ofRule = new HashSet<>();
        forEachHeldRule(pod, (d, rule) -> {
            ofRule.clear();
            render(rule, d, endpoint, pod, atoms, classesOf, identityOfClass, podClassesInAtom, ofRule);
            ofRule.forEach(e -> now.merge(e, 1, Integer::sum));
        });
        entriesByPod.put(key, now);
        now.keySet().forEach(e -> entries.put(e, PolicyMap.ALLOW));
        touched.addAll(now.keySet());
        return touched;
    }

    /** The number a default deny of the pod in direction {@code d} carries: every NetworkPolicy isolating it (0: none). */
    private int isolation(LocalPod pod, Direction d) {
        return pod.isolated(d) ? refs.ref(new Attribution.Isolation(d, pod.policies(d))) : AttributionRefs.NONE;
    }

    /**
     * One tier list as pod sides walk it: the tier, the direction, the ClusterNetworkPolicies in the order
     * they are tried, and, for an ingress list naming ports (resolved on the pod itself), the pods' identity.
     */
    private record TableKey(Tier tier, Direction direction, List<String> names, IdentityId self) {
        TableKey {
            names = List.copyOf(names);
        }
    }

    /**
     * A tier table: its number (the policy map's owner field), the sides using it, the verdicts of ANY and
     * of the atoms its rules hold (what a class falls back to), and its entries by peer (ANY, an atom, a
     * pod class, a node identity), each with its verdict.
     */
    private static final class Table {
        final int id;
        /** The policy map's direction: 0 ingress, 1 egress. */
        final int direction;
        int users;
        TierWalk.Verdicts any = NEXT_EVERYWHERE;
        final Map<Cidr, TierWalk.Verdicts> ofAtom = new HashMap<>();
        final Map<Integer, Map<PolicyEntry, Integer>> byPeer = new HashMap<>();

        Table(int id, Direction d) {
            this.id = id;
            this.direction = d == Direction.INGRESS ? 0 : 1;
        }
    }

    private static final TierWalk.Verdicts NEXT_EVERYWHERE = TierWalk.Verdicts.constant(PolicyMap.NEXT);

    /** Takes table {@code t} for one more side, made and rendered if no side had it. */
    private Table acquire(TableKey t, Set<PolicyEntry> touched) {
        Table table = tables.get(t);
        if (table == null) {
            table = new Table(tableIds.computeIfAbsent(t, k -> nextTable++), t.direction());
            tables.put(t, table);
            renderTable(t, table, touched);
        }
        table.users++;
        return table;
    }

    private void release(List<TableKey> used) {
        if (used != null) {
            used.forEach(t -> tables.get(t).users--);
        }
    }

    /** Drops the tables no side uses any more, with their entries (after the pods that may take them again). */
    private void dropUnusedTables(Set<PolicyEntry> touched) {
        tables.entrySet().removeIf(e -> {
            Table table = e.getValue();
            if (table.users > 0) {
                return false;
            }
            tableIds.remove(e.getKey());
            table.byPeer.values().forEach(m -> unlist(m, touched));
            return true;
        });
    }

    /**
     * A tier table, whole: the tier's verdicts for ANY (entries where they are not NEXT, what a miss gives),
     * for the atoms inside its rules' ipBlocks (entries where they differ from ANY's), for the pod classes
     * whose walk may differ from their atom's (entries where they differ from the atom's, or from ANY's for
     * a class in no atom or in an atom no rule names), and, in egress, for the node's own addresses (their
     * node identities' entries alone count: where they are not NEXT).
     */
    private void renderTable(TableKey t, Table table, Set<PolicyEntry> touched) {
        table.byPeer.values().forEach(m -> unlist(m, touched));
        table.byPeer.clear();
        table.ofAtom.clear();
        table.any = walk(t, null, null, null).verdicts();
        put(table, ANY, table.any, NEXT_EVERYWHERE, touched);
        Walked walked = walked(t);
        for (Cidr atom : walked.atoms()) {
            TierWalk.Verdicts verdicts = walk(t, null, atom, atomId(atom)).verdicts();
            table.ofAtom.put(atom, verdicts);
            put(table, atomId(atom), verdicts, table.any, touched);
        }
        // A class's walk depends on its identity and, through ipBlock and networks peers alone, on its atom:
        // where the tier's rules have none, the classes of one identity in every atom walk alike, once.
        boolean byAddress = hasAddressPeers(t);
        Map<Peer, TierWalk.Verdicts> ofPeer = new HashMap<>();
        for (int cls : walked.classes()) {
            IdentityId id = identityOfClass.get(cls);
            Cidr atom = atomOfClass.get(cls);
            TierWalk.Verdicts verdicts = ofPeer.computeIfAbsent(new Peer(id, byAddress ? atom : null), k -> walk(t, id, atom, cls).verdicts());
            put(table, cls, verdicts, fallback(table, atom), touched);
        }
        if (t.direction() == Direction.EGRESS) {
            for (Cidr atom : nodeAtoms()) {
                put(table, nodeId(atom), walk(t, null, atom, -1).verdicts(), NEXT_EVERYWHERE, touched);
            }
        }
    }

    /** Takes an owner's entries ({@code made}, null: none) out of the map, noting them in {@code touched}. */
    private void unlist(Map<PolicyEntry, Integer> made, Set<PolicyEntry> touched) {
        if (made != null) {
            entries.keySet().removeAll(made.keySet());
            touched.addAll(made.keySet());
        }
    }

    /** What the lookup gives a class of {@code atom} without entries of its own: its atom's, else ANY's. */
    private static TierWalk.Verdicts fallback(Table table, Cidr atom) {
        return atom == null ? table.any : table.ofAtom.getOrDefault(atom, table.any);
    }

    /** A peer's entries in a table: where {@code verdicts} differ from what the lookup falls back to. */
    private void put(Table table, int peer, TierWalk.Verdicts verdicts, TierWalk.Verdicts fallback, Set<PolicyEntry> touched) {
        Map<PolicyEntry, Integer> made = new HashMap<>();
        verdicts.entries(table.id, table.direction, peer, fallback, made);
        if (made.isEmpty()) {
            return;
        }
        table.byPeer.put(peer, made);
        entries.putAll(made);
        touched.addAll(made.keySet());
    }

    /**
     * One pod class walked anew in a table (it came, or its identity joined or left a set the table names),
     * or its entries dropped ({@code present} false: it is going). Only its own entries change: ANY's and
     * the atoms' do not depend on pod identities.
     */
    private void walkClass(TableKey t, Table table, int cls, boolean present) {
        unlist(table.byPeer.remove(cls), dirtyEntries);
        if (present) {
            IdentityId id = identityOfClass.get(cls);
            Cidr atom = atomOfClass.get(cls);
            put(table, cls, walk(t, id, atom, cls).verdicts(), fallback(table, atom), dirtyEntries);
        }
    }

    /** What a class's walk depends on: its identity and (null where no rule names addresses) its atom. */
    private record Peer(IdentityId id, Cidr atom) {}

    /** Whether a rule of table {@code t} has an ipBlock or networks peer. */
    private boolean hasAddressPeers(TableKey t) {
        boolean[] found = {false};
        forEachRule(t, (peers, ports) -> found[0] |= peers.stream().anyMatch(k -> k instanceof PeerSetKey.CidrPeers));
        return found[0];
    }

    /** The peers a table is computed for, besides ANY. */
    private record Walked(Set<Cidr> atoms, Set<Integer> classes) {}

    /**
     * The peers whose walk in table {@code t} may differ from ANY's: the atoms inside its ipBlocks
     * (outside their excepts); and the pod classes whose walk may differ from their atom's: those of its
     * selector sets' members and, where an egress rule names a port (resolved on the peer), those whose
     * identity serves one of the names. Any other pod class matches exactly the rules its atom matches
     * (an ipBlock peer depends on the address alone), with the same ports: it walks as its atom does, so
     * it needs no entries and is never looked at here (an ipBlock may hold 100,000 of them).
     */
    private Walked walked(TableKey t) {
        Set<Cidr> inside = new HashSet<>();
        Set<Integer> classes = new HashSet<>();
        Set<PortMatch.NamedPort> named = new HashSet<>();
        forEachRule(t, (peers, ports) -> {
            for (PeerSetKey k : peers) {
                if (k instanceof PeerSetKey.SelectorPeers) {
                    for (IdentityId id : sets.getOrDefault(k, Set.of())) {
                        classes.addAll(classesOf.getOrDefault(id, Set.of()));
                    }
                } else if (k instanceof PeerSetKey.CidrPeers c) {
                    for (Cidr a : atoms) {
                        if (c.cidr().contains(a) && c.except().stream().noneMatch(e -> e.contains(a))) {
                            inside.add(a);
                        }
                    }
                }
            }
            ports.forEach(m -> {
                if (m instanceof PortMatch.NamedPort n) {
                    named.add(n);
                }
            });
        });
        if (!named.isEmpty() && t.direction() == Direction.EGRESS) {
            classesOf.forEach((id, ofIdentity) -> {
                Identity identity = identities.get(id);
                if (identity != null && named.stream().anyMatch(identity.namedPorts()::containsKey)) {
                    classes.addAll(ofIdentity);
                }
            });
        }
        return new Walked(inside, classes);
    }

    /** The peers and ports of every rule of table {@code t}'s policies that are held. */
    private void forEachRule(TableKey t, BiConsumer<List<PeerSetKey>, List<PortMatch>> action) {
        for (String name : t.names()) {
            CompiledClusterPolicy policy = clusterPolicies.get(name);
            if (policy != null) {
                policy.rules(t.direction()).forEach(r -> action.accept(r.peers(), r.ports()));
            }
        }
    }

    /**
     * Table {@code t}'s tier walked for one peer: the class {@code cls} of identity {@code id} (null: an
     * address that is no pod) in {@code atom} (null: none); all null: ANY, a peer no rule names.
     */
    private TierWalk.Tier walk(TableKey t, IdentityId id, Cidr atom, Integer cls) {
        Identity destination = t.direction() == Direction.INGRESS ? (t.self() == null ? null : identities.get(t.self()))
                : id == null ? null : identities.get(id);
        List<TierWalk.Step> steps = new ArrayList<>();
        for (String name : t.names()) {
            CompiledClusterPolicy policy = clusterPolicies.get(name);
            if (policy == null) {
                // not held (yet): denies whatever reaches its place
                steps.add(TierWalk.Step.failClosed(refs.ref(new Attribution.Unheld(t.tier(), name))));
                continue;
            }
            for (CompiledClusterRule r : policy.rules(t.direction())) {
                if (cls == null ? r.anyPeer() : r.anyPeer() || admits(r.peers(), id, atom)) {
                    steps.add(step(r.action(), ruleRef(t, name, r), r.anyPort(), r.ports(), destination));
                }
            }
        }
        return new TierWalk.Tier(steps);
    }

    /** The atoms holding one of the node's own addresses. */
    private Set<Cidr> nodeAtoms() {
        Set<Cidr> out = new HashSet<>();
        for (IpAddress ip : nodeAddresses) {
            Cidr atom = atomOf(ip, atoms);
            if (atom != null) {
                out.add(atom);
            }
        }
        return out;
    }

    private int nodeId(Cidr atom) {
        return nodeIds.computeIfAbsent(atom, k -> nextNode++);
    }

    /** The number of a rule that decides (Accept, Deny); 0 for Pass, which never does. */
    private int ruleRef(TableKey t, String policy, CompiledClusterRule r) {
        return r.action() == RuleAction.PASS ? AttributionRefs.NONE
                : refs.ref(new Attribution.ByClusterRule(new ClusterRuleRef(t.tier(), policy, t.direction(), r.index(), r.name()), r.action()));
    }

    /** A rule's ports resolved on {@code destination} (a named port it lacks, or no destination pod, matches nothing). */
    private static TierWalk.Step step(RuleAction action, int ref, boolean anyPort, List<PortMatch> ports, Identity destination) {
        List<TierWalk.Range> ranges = new ArrayList<>();
        for (PortMatch m : ports) {
            if (m instanceof PortMatch.PortRange r) {
                ranges.add(new TierWalk.Range(r.protocol(), r.first(), r.last()));
            } else if (m instanceof PortMatch.NamedPort n && destination != null) {
                Integer port = destination.namedPorts().get(n);
                if (port != null) {
                    ranges.add(new TierWalk.Range(n.protocol(), port, port));
                }
            }
        }
        return new TierWalk.Step(action, ref, anyPort, ranges);
    }

    /**
     * A peer class came ({@code delta} 1) or is about to go (-1): the entries each rule of {@code pods}
     * makes for that class alone are counted in or out, without redoing the pods. Pods already to be
     * redone whole at the next render are left to it (their sets, policies or identities changed).
     */
    private void countClass(Set<PodKey> pods, IdentityId id, int cls, Cidr atom, int delta) {
        Set<PolicyEntry> ofRule = new HashSet<>();
        for (PodKey key : pods) {
            if (!countable(key)) {
                continue;
            }
            LocalPod pod = this.pods.get(key);
            int endpoint = endpointIds.get(key);
            Map<PolicyEntry, Integer> counts = entriesByPod.get(key);
            forEachHeldRule(pod, (d, rule) -> {
                ofRule.clear();
                classEntries(rule, d, endpoint, pod, id, cls, atom, ofRule);
                count(counts, ofRule, delta);
            });
        }
    }

    /**
     * Whether a pod's entries can be counted in place: it was rendered and is not to be redone whole at
     * the next render anyway. One that cannot is marked to be redone whole.
     */
    private boolean countable(PodKey key) {
        if (dirtyPods.contains(key) || !pods.containsKey(key) || !endpointIds.containsKey(key) || !entriesByPod.containsKey(key)) {
            dirtyPods.add(key);
            return false;
        }
        return true;
    }

    /** Each rule of each policy the pod holds in a direction that policy isolates: what its entries come from. */
    private void forEachHeldRule(LocalPod pod, BiConsumer<Direction, CompiledRule> action) {
        for (Direction d : Direction.values()) {
            forEachHeldRule(pod, d, rule -> action.accept(d, rule));
        }
    }

    private void forEachHeldRule(LocalPod pod, Direction d, java.util.function.Consumer<CompiledRule> action) {
        for (PolicyKey pk : pod.policies(d)) {
            CompiledPolicy policy = policies.get(pk);
            if (policy == null || !policy.isolates(d)) {
                continue; // not held: the pod stays isolated without its allows (fail closed)
            }
            policy.rules(d).forEach(action);
        }
    }

    /** Counts one rule's {@code made} entries in (1) or out (-1) of a pod's: an entry lives while a rule makes it. */
    private void count(Map<PolicyEntry, Integer> counts, Set<PolicyEntry> made, int delta) {
        for (PolicyEntry e : made) {
            int n = counts.merge(e, delta, Integer::sum);
            if (n <= 0) {
                counts.remove(e);
                entries.remove(e);
                dirtyEntries.add(e);
            } else if (n == 1 && delta > 0) {
                entries.put(e, PolicyMap.ALLOW);
                dirtyEntries.add(e);
            }
        }
    }

    /** The entries {@code rule} makes for peer class {@code cls} (of identity {@code id}, in {@code atom}) alone. */
    private void classEntries(CompiledRule rule, Direction d, int endpoint, LocalPod pod, IdentityId id, int cls, Cidr atom,
            Set<PolicyEntry> out) {
        if (rule.anyPeer()) {
            // ANY covers the class, except an egress named port, which lists each class serving the name
            if (d == Direction.EGRESS && !rule.anyPort()) {
                Identity identity = identities.get(id);
                for (PortMatch m : rule.ports()) {
                    Integer port = m instanceof PortMatch.NamedPort n && identity != null ? identity.namedPorts().get(n) : null;
                    if (port != null) {
                        out.add(new PolicyEntry(endpoint, 1, cls, false, m.protocol().ipProtocolNumber(), port, 16));
                    }
                }
            }
            return;
        }
        if (makesClassEntries(rule, d, id, atom)) {
            portEntries(rule, d, endpoint, pod, cls, out);
        }
    }

    /**
     * Whether {@code rule} (which has peers) makes entries of its own for the class of {@code id} in
     * {@code atom}: a selector peer holds {@code id}, or an ipBlock peer holds the atom and the rule names
     * a port resolved on the peer (egress), which the atom's entries cannot carry. A class only an ipBlock
     * admits otherwise falls back to its atom's entries (all allow: the lookup's fallback adds, never takes).
     */
    private boolean makesClassEntries(CompiledRule rule, Direction d, IdentityId id, Cidr atom) {
        for (PeerSetKey k : rule.peers()) {
            if (k instanceof PeerSetKey.SelectorPeers && sets.getOrDefault(k, Set.of()).contains(id)) {
                return true;
            }
        }
        return d == Direction.EGRESS && namesAPort(rule) && admits(rule.peers(), null, atom);
    }

    private static boolean namesAPort(CompiledRule rule) {
        return rule.ports().stream().anyMatch(m -> m instanceof PortMatch.NamedPort);
    }

    /** Whether one of {@code peers} holds the class of {@code id} (null: no pod) in {@code atom} (null: none). */
    private boolean admits(List<PeerSetKey> peers, IdentityId id, Cidr atom) {
        for (PeerSetKey k : peers) {
            if (k instanceof PeerSetKey.SelectorPeers && id != null && sets.getOrDefault(k, Set.of()).contains(id)) {
                return true;
            } else if (k instanceof PeerSetKey.CidrPeers c && atom != null && c.cidr().contains(atom)
                    && c.except().stream().noneMatch(e -> e.contains(atom))) {
                return true;
            }
        }
        return false;
    }

    /**
     * One rule of one pod and one class of an identity whose membership in a set the rule names is
     * about to change: whether the rule made entries for the class before; {@link #recount} after the
     * change counts the rule's entries for the class in or out if that changed (another peer of the rule
     * may still make them).
     */
    private record Admission(PodKey pod, int endpoint, LocalPod row, Direction direction, CompiledRule rule, IdentityId id, int cls,
            boolean before) {
        void recount(BpfModel m) {
            boolean after = m.makesClassEntries(rule, direction, id, m.atomOfClass.get(cls));
            if (after == before) {
                return;
            }
            Set<PolicyEntry> ofRule = new HashSet<>();
            m.portEntries(rule, direction, endpoint, row, cls, ofRule);
            m.count(m.entriesByPod.get(pod), ofRule, after ? 1 : -1);
        }
    }

    /** For each rendered pod not to be redone whole, each rule naming {@code set} and each class of {@code id}: an {@link Admission}. */
    private List<Admission> admissions(PeerSetKey set, IdentityId id) {
        Set<Integer> classes = classesOf.getOrDefault(id, Set.of());
        if (classes.isEmpty()) {
            return List.of();
        }
        Set<PodKey> users = new HashSet<>();
        podsUsing(set, users);
        List<Admission> out = new ArrayList<>();
        for (PodKey key : users) {
            if (!countable(key)) {
                continue;
            }
            LocalPod pod = pods.get(key);
            int endpoint = endpointIds.get(key);
            forEachHeldRule(pod, (d, rule) -> {
                if (rule.peers().contains(set)) {
                    for (int cls : classes) {
                        out.add(new Admission(key, endpoint, pod, d, rule, id, cls, makesClassEntries(rule, d, id, atomOfClass.get(cls))));
                    }
                }
            });
        }
        return out;
    }

    private void render(CompiledRule rule, Direction d, int endpoint, LocalPod pod, List<Cidr> atoms,
            Map<IdentityId, Set<Integer>> classesOf, Map<Integer, IdentityId> identityOfClass,
            Map<Cidr, Set<Integer>> podClassesInAtom, Set<PolicyEntry> out) {
        Set<Integer> peers = new HashSet<>();
        if (rule.anyPeer()) {
            peers.add(ANY);
        } else {
            for (PeerSetKey k : rule.peers()) {
                if (k instanceof PeerSetKey.SelectorPeers) {
                    for (IdentityId id : sets.getOrDefault(k, Set.of())) {
                        peers.addAll(classesOf.getOrDefault(id, Set.of()));
                    }
                } else if (k instanceof PeerSetKey.CidrPeers c) {
                    // the atom's entries cover its pod classes, but for a port resolved on each of them
                    boolean perPod = d == Direction.EGRESS && namesAPort(rule);
                    for (Cidr a : atoms) {
                        if (c.cidr().contains(a) && c.except().stream().noneMatch(e -> e.contains(a))) {
                            peers.add(atomId(a));
                            if (perPod) {
                                peers.addAll(podClassesInAtom.getOrDefault(a, Set.of()));
                            }
                        }
                    }
                }
            }
        }
        for (int peer : peers) {
            portEntries(rule, d, endpoint, pod, peer, out);
        }
    }

    /** The entries of {@code rule} for one peer (a class, an atom or ANY): one per port, or one for any port. */
    private void portEntries(CompiledRule rule, Direction d, int endpoint, LocalPod pod, int peer, Set<PolicyEntry> out) {
        int dir = d == Direction.INGRESS ? 0 : 1;
        if (rule.anyPort()) {
            out.add(new PolicyEntry(endpoint, dir, peer, true, 0, 0, 0));
            return;
        }
        for (PortMatch m : rule.ports()) {
            int proto = m.protocol().ipProtocolNumber();
            if (m instanceof PortMatch.PortRange r) {
                for (PortPrefixes.Prefix p : PortPrefixes.of(r.first(), r.last())) {
                    out.add(new PolicyEntry(endpoint, dir, peer, false, proto, p.port(), p.bits()));
                }
            } else {
                PortMatch.NamedPort n = (PortMatch.NamedPort) m;
                if (d == Direction.INGRESS) {
                    Identity self = identities.get(pod.identity());
                    Integer port = self == null ? null : self.namedPorts().get(n);
                    if (port != null) {
                        out.add(new PolicyEntry(endpoint, dir, peer, false, proto, port, 16));
                    }
                } else if (peer == ANY) {
                    // Every pod serving the name, each on its own port; addresses that are no pod never match.
                    identityOfClass.forEach((cls, id) -> {
                        Integer port = identities.get(id).namedPorts().get(n);
                        if (port != null) {
                            out.add(new PolicyEntry(endpoint, dir, cls, false, proto, port, 16));
                        }
                    });
                } else {
                    Identity peerIdentity = identities.get(identityOfClass.get(peer));
                    Integer port = peerIdentity == null ? null : peerIdentity.namedPorts().get(n);
                    if (port != null) {
                        out.add(new PolicyEntry(endpoint, dir, peer, false, proto, port, 16));
                    }
                }
            }
        }
    }

    /** Every prefix an ipBlock or an except of a held peer set names, longest first. */
    private List<Cidr> atoms() {
        TreeSet<Cidr> all = new TreeSet<>();
        for (PeerSetKey k : sets.keySet()) {
            if (k instanceof PeerSetKey.CidrPeers c) {
                all.add(c.cidr());
                all.addAll(c.except());
            }
        }
        List<Cidr> out = new ArrayList<>(all);
        out.sort((a, b) -> Integer.compare(b.prefixLength(), a.prefixLength()));
        return out;
    }

    private static Cidr atomOf(IpAddress ip, List<Cidr> atomsLongestFirst) {
        for (Cidr a : atomsLongestFirst) {
            if (a.contains(ip)) {
                return a;
            }
        }
        return null;
    }

    private int atomId(Cidr atom) {
        return atomIds.computeIfAbsent(atom, k -> nextAtom++);
    }

    public Set<PodKey> localPods() {
        return pods.keySet();
    }

    /** NetworkPolicies and ClusterNetworkPolicies held, as the netfilter backends count them. */
    public int policyCount() {
        return policies.size() + clusterPolicies.size();
    }
}
