package io.npmagent.bpf.model;

import io.npmagent.dataplane.desired.CompiledPolicy;
import io.npmagent.dataplane.desired.CompiledRule;
import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.desired.DesiredState;
import io.npmagent.dataplane.desired.Identity;
import io.npmagent.dataplane.desired.IdentityId;
import io.npmagent.dataplane.desired.LocalPod;
import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.desired.PortMatch;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
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
 *
 * <p><b>Policy entries.</b> Per local pod and direction its policies isolate, the union of its rules:
 * each admitted peer class (or ANY for a rule without peers) times each port (an any-protocol entry
 * for a rule without ports; a range as aligned prefixes; a named port resolved on the destination:
 * the pod itself for ingress, each peer class's identity for egress). An ipBlock admits the atoms
 * inside it and outside every except (every except is itself an atom, so atoms never straddle one).
 */
public final class BpfModel {
    public static final int ANY = -1;
    public static final int WORLD = 0;
    /** The node's own addresses: always admitted (set by the backend, which knows the node). */
    public static final int HOST = 1;
    private static final int POD_CLASS_BASE = 0x20000000;
    private static final int ATOM_BASE = 0x40000000;

    private final Map<IdentityId, Identity> identities = new HashMap<>();
    private final Map<IpAddress, IdentityId> addresses = new HashMap<>();
    private final Map<PeerSetKey, Set<IdentityId>> sets = new HashMap<>();
    private final Map<PolicyKey, CompiledPolicy> policies = new HashMap<>();
    private final Map<PodKey, LocalPod> pods = new HashMap<>();

    private final Map<PodKey, Integer> endpointIds = new HashMap<>();
    private final Map<List<Object>, Integer> classIds = new HashMap<>();
    private final Map<Cidr, Integer> atomIds = new HashMap<>();
    private int nextEndpoint = 1;
    private int nextClass = POD_CLASS_BASE;
    private int nextAtom = ATOM_BASE;

    // What a pod's entries depend on, to find the pods a policy-only delta changes.
    private final Map<PolicyKey, Set<PodKey>> podsByPolicy = new HashMap<>();
    private final Map<PeerSetKey, Set<PolicyKey>> policiesBySet = new HashMap<>();

    // The last render, kept so the next one redoes only what changed.
    private boolean renderAll = true;
    private final Set<PodKey> dirtyPods = new HashSet<>();
    private List<Cidr> atoms = List.of();
    private Map<Cidr, Integer> ipcache = new LinkedHashMap<>();
    private Map<IdentityId, Set<Integer>> classesOf = new HashMap<>();
    private Map<Integer, IdentityId> identityOfClass = new HashMap<>();
    private Map<Cidr, Set<Integer>> podClassesInAtom = new HashMap<>();
    private final Map<PodKey, Rendered.Endpoint> endpoints = new LinkedHashMap<>();
    private final Map<PodKey, Set<PolicyEntry>> entriesByPod = new HashMap<>();
    private final Set<PolicyEntry> entries = new HashSet<>();

    /**
     * Takes a delta and notes what the next render must redo: everything when identities, addresses or
     * ipBlocks change (peer classes move); otherwise, the pods whose rows, policies or peer sets changed.
     */
    public void apply(DesiredDelta d) {
        if (!d.identities().isEmpty() || !d.addresses().isEmpty()
                || d.peerSets().keySet().stream().anyMatch(k -> k instanceof PeerSetKey.CidrPeers)) {
            renderAll = true;
        }
        d.pods().forEach((k, c) -> {
            index(podsByPolicy, c.before(), k, false);
            index(podsByPolicy, c.after(), k, true);
            dirtyPods.add(k);
        });
        d.policies().forEach((k, c) -> {
            if (c.before() != null) {
                c.before().peerSets().forEach(set -> Multimaps.remove(policiesBySet, set, k));
            }
            if (c.after() != null) {
                c.after().peerSets().forEach(set -> Multimaps.add(policiesBySet, set, k));
            }
            dirtyPods.addAll(podsByPolicy.getOrDefault(k, Set.of()));
        });
        d.members().keySet().forEach(m -> dirtyPodsOf(m.set()));
        d.peerSets().keySet().forEach(this::dirtyPodsOf);

        d.identities().forEach((k, c) -> put(identities, k, c.after()));
        d.addresses().forEach((k, c) -> put(addresses, k, c.after()));
        d.peerSets().forEach((k, present) -> {
            if (present) {
                sets.putIfAbsent(k, new HashSet<>());
            } else {
                sets.remove(k);
            }
        });
        d.members().forEach((m, present) -> {
            Set<IdentityId> members = sets.get(m.set());
            if (members != null) {
                if (present) {
                    members.add(m.identity());
                } else {
                    members.remove(m.identity());
                }
            }
        });
        d.policies().forEach((k, c) -> put(policies, k, c.after()));
        d.pods().forEach((k, c) -> put(pods, k, c.after()));
    }

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
        for (PolicyKey pk : policiesBySet.getOrDefault(set, Set.of())) {
            dirtyPods.addAll(podsByPolicy.getOrDefault(pk, Set.of()));
        }
    }

    /** The rows as a snapshot, for tests. */
    public DesiredState state() {
        Map<PeerSetKey, SortedSet<IdentityId>> s = new HashMap<>();
        sets.forEach((k, v) -> s.put(k, new TreeSet<>(v)));
        return new DesiredState(new TreeMap<>(identities), new TreeMap<>(addresses), new TreeMap<>(s),
                new TreeMap<>(policies), new TreeMap<>(pods));
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
            Set<PolicyEntry> touched = new HashSet<>();
            for (PodKey pod : dirtyPods) {
                touched.addAll(renderPod(pod));
            }
            changes = new Rendered.Changes(false, Set.copyOf(dirtyPods), touched);
        }
        renderAll = false;
        dirtyPods.clear();
        return new Rendered(Collections.unmodifiableMap(ipcache), Collections.unmodifiableMap(endpoints),
                Collections.unmodifiableSet(entries), changes);
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
        Set<List<Object>> usedClasses = new HashSet<>();
        for (Cidr a : atoms) {
            ipcache.put(a, atomId(a));
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
            }
            ipcache.put(Cidr.host(ip), cls);
            classesOf.computeIfAbsent(id, k -> new HashSet<>()).add(cls);
            identityOfClass.put(cls, id);
        });
        classIds.keySet().retainAll(usedClasses);
        atomIds.keySet().retainAll(atoms);

        endpointIds.keySet().retainAll(pods.keySet());
        endpoints.clear();
        entriesByPod.clear();
        entries.clear();
        for (PodKey pod : pods.keySet()) {
            renderPod(pod);
        }
    }

    /** Redoes one pod's endpoint and entries; returns the entries it dropped and the ones it has now. */
    private Set<PolicyEntry> renderPod(PodKey key) {
        Set<PolicyEntry> touched = new HashSet<>();
        Set<PolicyEntry> before = entriesByPod.remove(key);
        if (before != null) {
            entries.removeAll(before);
            touched.addAll(before);
        }
        LocalPod pod = pods.get(key);
        if (pod == null) {
            endpoints.remove(key);
            endpointIds.remove(key);
            return touched;
        }
        int endpoint = endpointIds.computeIfAbsent(key, k -> nextEndpoint++);
        endpoints.put(key, new Rendered.Endpoint(endpoint, pod.ips(), pod.isolated(Direction.INGRESS), pod.isolated(Direction.EGRESS),
                pod.bandwidth()));
        Set<PolicyEntry> now = new HashSet<>();
        for (Direction d : Direction.values()) {
            for (PolicyKey pk : pod.policies(d)) {
                CompiledPolicy policy = policies.get(pk);
                if (policy == null || !policy.isolates(d)) {
                    continue; // not held: the pod stays isolated without its allows (fail closed)
                }
                for (CompiledRule rule : policy.rules(d)) {
                    render(rule, d, endpoint, pod, atoms, classesOf, identityOfClass, podClassesInAtom, now);
                }
            }
        }
        entriesByPod.put(key, now);
        entries.addAll(now);
        touched.addAll(now);
        return touched;
    }

    private void render(CompiledRule rule, Direction d, int endpoint, LocalPod pod, List<Cidr> atoms,
            Map<IdentityId, Set<Integer>> classesOf, Map<Integer, IdentityId> identityOfClass,
            Map<Cidr, Set<Integer>> podClassesInAtom, Set<PolicyEntry> out) {
        int dir = d == Direction.INGRESS ? 0 : 1;
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
                    for (Cidr a : atoms) {
                        if (c.cidr().contains(a) && c.except().stream().noneMatch(e -> e.contains(a))) {
                            peers.add(atomId(a));
                            peers.addAll(podClassesInAtom.getOrDefault(a, Set.of()));
                        }
                    }
                }
            }
        }
        for (int peer : peers) {
            if (rule.anyPort()) {
                out.add(new PolicyEntry(endpoint, dir, peer, true, 0, 0, 0));
                continue;
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
                        IdentityId id = identityOfClass.get(peer);
                        Integer port = id == null ? null : identities.get(id).namedPorts().get(n);
                        if (port != null) {
                            out.add(new PolicyEntry(endpoint, dir, peer, false, proto, port, 16));
                        }
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

    public int policyCount() {
        return policies.size();
    }
}
