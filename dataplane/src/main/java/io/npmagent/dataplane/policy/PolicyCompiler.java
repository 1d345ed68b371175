package io.npmagent.dataplane.policy;

import io.npmagent.dataplane.bandwidth.BandwidthAnnotations;
import io.npmagent.dataplane.bandwidth.BandwidthLimits;
import io.npmagent.dataplane.bandwidth.CongestionAnnotation;
import io.npmagent.dataplane.desired.CompiledClusterPolicy;
import io.npmagent.dataplane.desired.CompiledPolicy;
import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.desired.DesiredState;
import io.npmagent.dataplane.desired.Identity;
import io.npmagent.dataplane.desired.IdentityId;
import io.npmagent.dataplane.desired.LocalPod;
import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.desired.PortMatch;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.ContainerPort;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.ObjectRef;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.ValidationError;
import io.npmagent.dataplane.tier.ClusterPolicyNormalizer;
import io.npmagent.dataplane.tier.NormalizedClusterPolicy;
import io.npmagent.dataplane.util.Multimaps;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Turns cluster events into changes of the {@link DesiredState}, incrementally.
 *
 * <p><b>What it owns.</b> The indexed cluster state and everything derived from it: address ownership,
 * identities, peer-set membership, which local pods each policy selects. Every event recomputes only
 * what the changed object can affect, and the result is the net change of the desired rows:
 * <ul>
 *   <li>a pod event: the pod's address claims (and the pods it contends with for an address), its
 *       identity (which may create or release one; a new identity is matched against the selector sets
 *       of its namespace and those with a namespace selector: {@link SelectorIndex}), and, if it is
 *       local, the policies of its namespace that select it;</li>
 *   <li>a namespace event: the identities of the pods in it (namespace labels are part of identity);</li>
 *   <li>a policy event: its effective form, the peer sets it names (a new set is matched against the
 *       identities it could hold; a set no policy names is removed), and the local pods of its
 *       namespace it selects.</li>
 * </ul>
 * Output depends only on the current state, never on the order that led there (identity numbers
 * aside): compiling event by event and compiling a snapshot from scratch give the same rows.
 *
 * <p><b>Address ownership.</b> An address is owned by one pod: of the live pod-network pods that list
 * it, the least by namespace/name. Terminal and host-network pods own nothing. The evaluator applies
 * the same rule, so a reused address is judged the same everywhere.
 *
 * <p><b>Threads.</b> Not thread-safe: one model thread feeds it (sources hand events to that thread).
 */
public final class PolicyCompiler {
    private final String nodeName;
    /** The node's tcp_available_congestion_control; null when not known (then only the syntax is checked). */
    private final Set<String> congestionControls;

    // The cluster as last seen.
    private final Map<String, Namespace> namespaces = new HashMap<>();
    private final Map<PodKey, Pod> pods = new HashMap<>();
    private final Map<String, Set<PodKey>> podsByNamespace = new HashMap<>();
    /** Local endpoints only: what a policy's podSelector may select (at 100,000 pods, a node's hundred). */
    private final LabelIndex<PodKey> targetsByLabel = new LabelIndex<>();
    /** The same pods, for ClusterNetworkPolicies, whose subjects span namespaces. */
    private final Set<PodKey> localEndpoints = new HashSet<>();
    private final Map<PodKey, BandwidthLimits> limits = new HashMap<>();
    /** Pods that ask for a congestion control the node has; most ask for none and have no entry. */
    private final Map<PodKey, String> congestion = new HashMap<>();
    private final Map<PolicyKey, NormalizedPolicy> policies = new HashMap<>();
    private final Map<String, Set<PolicyKey>> policiesByNamespace = new HashMap<>();
    private final Map<ObjectRef, List<ValidationError>> errors = new TreeMap<>(
            (a, b) -> a.toString().compareTo(b.toString()));

    // Derived indexes.
    private final AddressClaims claimants = new AddressClaims();
    private final Map<PodKey, List<IpAddress>> ownedAddresses = new HashMap<>();
    private final Map<PodKey, IdentityId> podIdentity = new HashMap<>();
    private final Map<Identity, IdentityId> identityIds = new HashMap<>();
    private final Map<IdentityId, Set<PodKey>> identityPods = new HashMap<>();
    private final BitSet usedIds = new BitSet();
    private final Map<PeerSetKey, Integer> setReferences = new HashMap<>();
    private final SelectorIndex selectorIndex = new SelectorIndex();
    private final Map<PolicyKey, Set<PodKey>> policyTargets = new HashMap<>();
    private final Map<PodKey, Set<PolicyKey>> podPolicies = new HashMap<>();

    // The desired rows, with their changes since the last event.
    private final TrackedMap<IdentityId, Identity> identityRows = new TrackedMap<>();
    private final TrackedMap<IpAddress, IdentityId> addressRows = new TrackedMap<>();
    private final TrackedMap<PeerSetKey, Boolean> setRows = new TrackedMap<>();
    private final MembershipTable members = new MembershipTable();
    private final TrackedMap<PolicyKey, CompiledPolicy> policyRows = new TrackedMap<>();
    private final ClusterPolicyTable clusterPolicies = new ClusterPolicyTable();
    private final TrackedMap<String, CompiledClusterPolicy> clusterPolicyRows = new TrackedMap<>();
    private final TrackedMap<PodKey, LocalPod> podRows = new TrackedMap<>();

    /**
     * @param nodeName the node whose pods are enforcement targets; null makes every pod local (a
     *                 single-node sandbox, or evaluating the whole cluster)
     */
    public PolicyCompiler(String nodeName) {
        this(nodeName, null);
    }

    /**
     * @param congestionControls the congestion controls the node's kernel offers, which a pod's
     *                           {@code npm-agent.io/tcp-congestion} must name; null checks only the syntax
     */
    public PolicyCompiler(String nodeName, Set<String> congestionControls) {
        this.nodeName = nodeName;
        this.congestionControls = congestionControls == null ? null : Set.copyOf(congestionControls);
    }

    /** The desired state of {@code cluster} for {@code nodeName}, compiled from nothing. */
    public static DesiredState compile(ClusterState cluster, String nodeName) {
        PolicyCompiler compiler = new PolicyCompiler(nodeName);
        cluster.asEvents().forEach(compiler::apply);
        return compiler.snapshot();
    }

    public CompileResult apply(ClusterEvent event) {
        List<ValidationError> found = compile(event);
        return new CompileResult(drain(), found);
    }

    /**
     * A whole state's events, then their changes together: from a compiler that has seen nothing, the
     * whole desired state as additions, as {@code DesiredDelta.of(snapshot())} has it, without a delta
     * per event and a sorted copy of every row in between (at 100,000 pods, a fifth of the start).
     */
    public DesiredDelta load(List<ClusterEvent> events) {
        events.forEach(this::compile);
        return drain();
    }

    /** Applies one event to the state; returns the errors found in its object. */
    private List<ValidationError> compile(ClusterEvent event) {
        List<ValidationError> found = List.of();
        if (event instanceof ClusterEvent.NamespaceUpserted e) {
            namespaceChanged(e.namespace().name(), e.namespace());
        } else if (event instanceof ClusterEvent.NamespaceDeleted e) {
            namespaceChanged(e.name(), null);
        } else if (event instanceof ClusterEvent.PodUpserted e && e.pod().equals(pods.get(e.pod().key()))) {
            // The pod as it is (an informer's relist or resync redelivers every object): nothing to do, and
            // at 100,000 pods doing it anyway would hold up every other change for seconds.
            found = errors.getOrDefault(ObjectRef.of(e.pod().key()), List.of());
        } else if (event instanceof ClusterEvent.PodUpserted e) {
            BandwidthAnnotations.Read bandwidth = BandwidthAnnotations.read(e.pod());
            CongestionAnnotation.Read tcp = CongestionAnnotation.read(e.pod(), congestionControls);
            List<ValidationError> podErrors = new ArrayList<>(bandwidth.errors());
            podErrors.addAll(tcp.errors());
            found = List.copyOf(podErrors);
            recordErrors(ObjectRef.of(e.pod().key()), found);
            if (bandwidth.limits().limited()) {
                limits.put(e.pod().key(), bandwidth.limits());
            } else {
                limits.remove(e.pod().key()); // read as NONE: most pods have no limit, and need no entry
            }
            if (tcp.congestion() != null) {
                congestion.put(e.pod().key(), tcp.congestion());
            } else {
                congestion.remove(e.pod().key());
            }
            podChanged(e.pod().key(), e.pod());
        } else if (event instanceof ClusterEvent.PodDeleted e) {
            recordErrors(ObjectRef.of(e.key()), List.of());
            limits.remove(e.key());
            congestion.remove(e.key());
            podChanged(e.key(), null);
        } else if (event instanceof ClusterEvent.PolicyUpserted e) {
            NormalizedPolicy normalized = PolicyNormalizer.normalize(e.policy());
            found = normalized.errors();
            policyChanged(e.policy().key(), normalized);
        } else if (event instanceof ClusterEvent.PolicyDeleted e) {
            policyChanged(e.key(), null);
        } else if (event instanceof ClusterEvent.ClusterPolicyUpserted e) {
            NormalizedClusterPolicy normalized = ClusterPolicyNormalizer.normalize(e.policy());
            found = normalized.errors();
            recordErrors(ObjectRef.clusterNetworkPolicy(e.policy().name()), found);
            clusterPolicyChanged(e.policy().name(), normalized);
        } else if (event instanceof ClusterEvent.ClusterPolicyDeleted e) {
            recordErrors(ObjectRef.clusterNetworkPolicy(e.name()), List.of());
            clusterPolicyChanged(e.name(), null);
        } else if (event instanceof ClusterEvent.NodeUpserted e) {
            clusterPolicies.putNode(e.node().name(), e.node()).forEach(this::recompileClusterPolicy);
        } else if (event instanceof ClusterEvent.NodeDeleted e) {
            clusterPolicies.putNode(e.name(), null).forEach(this::recompileClusterPolicy);
        }
        return found;
    }

    private void recordErrors(ObjectRef ref, List<ValidationError> found) {
        if (found.isEmpty()) {
            errors.remove(ref);
        } else {
            errors.put(ref, found);
        }
    }

    /** Local pods that ask for a congestion control, in order. */
    public List<PodKey> congestionPods() {
        return podRows.view().values().stream().filter(p -> p.congestion() != null).map(LocalPod::key).sorted().toList();
    }

    /** Local pods with a bandwidth limit, in order. */
    public List<PodKey> rateLimitedPods() {
        return podRows.view().values().stream().filter(p -> p.bandwidth().limited()).map(LocalPod::key).sorted().toList();
    }

    /** The objects that currently have validation errors, with the errors. */
    public Map<ObjectRef, List<ValidationError>> errors() {
        return Collections.unmodifiableMap(errors);
    }

    public DesiredState snapshot() {
        Map<PeerSetKey, Set<IdentityId>> sets = new HashMap<>();
        for (PeerSetKey set : setRows.view().keySet()) {
            sets.put(set, members.members(set));
        }
        return new DesiredState(
                new TreeMap<>(identityRows.view()),
                new TreeMap<>(addressRows.view()),
                toSorted(sets),
                new TreeMap<>(policyRows.view()),
                new TreeMap<>(clusterPolicyRows.view()),
                new TreeMap<>(podRows.view()));
    }

    private static TreeMap<PeerSetKey, SortedSet<IdentityId>> toSorted(Map<PeerSetKey, Set<IdentityId>> sets) {
        TreeMap<PeerSetKey, SortedSet<IdentityId>> out = new TreeMap<>();
        sets.forEach((k, v) -> out.put(k, new TreeSet<>(v)));
        return out;
    }

    private DesiredDelta drain() {
        Map<PeerSetKey, Boolean> sets = new LinkedHashMap<>();
        setRows.drain().forEach((k, c) -> sets.put(k, !c.isRemoval()));
        return new DesiredDelta(
                identityRows.drain(),
                addressRows.drain(),
                sets,
                members.drain(),
                policyRows.drain(),
                clusterPolicyRows.drain(),
                podRows.drain());
    }

    // ---- namespaces -------------------------------------------------------------------------

    private void namespaceChanged(String name, Namespace namespace) {
        Namespace before = namespaceOf(name);
        if (namespace == null) {
            namespaces.remove(name);
        } else {
            namespaces.put(name, namespace);
        }
        if (before.labels().equals(namespaceOf(name).labels())) {
            return;
        }
        for (PodKey pod : List.copyOf(podsByNamespace.getOrDefault(name, Set.of()))) {
            refreshClusterTargets(pod); // a subject's namespace selector may see the namespace differently now
            refreshIdentityAndRows(pod);
        }
    }

    private Namespace namespaceOf(String name) {
        Namespace ns = namespaces.get(name);
        return ns != null ? ns : Namespace.unknown(name);
    }

    // ---- pods -------------------------------------------------------------------------------

    private void podChanged(PodKey key, Pod pod) {
        Pod old = pods.get(key);
        if (isLocalEndpoint(old)) {
            targetsByLabel.remove(key.namespace(), old.labels(), key);
            localEndpoints.remove(key);
        }
        if (pod == null) {
            pods.remove(key);
            Multimaps.remove(podsByNamespace, key.namespace(), key);
        } else {
            pods.put(key, pod);
            Multimaps.add(podsByNamespace, key.namespace(), key);
            if (isLocalEndpoint(pod)) {
                targetsByLabel.add(key.namespace(), pod.labels(), key);
                localEndpoints.add(key);
            }
        }
        Set<PodKey> affected = updateClaims(key, old, pod);
        refreshTargets(key);
        refreshClusterTargets(key);
        for (PodKey p : affected) {
            refreshIdentityAndRows(p);
        }
    }

    /**
     * The addresses a pod claims: a live pod-network pod's. A function of the pod, so the pod's last version
     * says what it claimed before (a map of claims beside the pods cost 12 MB at 150,000 pods).
     */
    private static Set<IpAddress> claimed(Pod pod) {
        return pod != null && pod.policyEndpoint() ? new HashSet<>(pod.ips()) : Set.of();
    }

    /** Records the addresses {@code key} claims now; returns it and every pod whose owned addresses changed. */
    private Set<PodKey> updateClaims(PodKey key, Pod old, Pod pod) {
        Set<IpAddress> now = claimed(pod);
        Set<IpAddress> before = claimed(old);
        Set<PodKey> affected = new HashSet<>();
        affected.add(key);
        for (IpAddress ip : before) {
            if (!now.contains(ip)) {
                PodKey owner = claimants.remove(ip, key);
                if (owner != null) {
                    affected.add(owner);
                }
            }
        }
        for (IpAddress ip : now) {
            if (!before.contains(ip)) {
                PodKey owner = claimants.add(ip, key);
                if (owner != null) {
                    affected.add(owner);
                }
            }
        }
        return affected;
    }

    /** The addresses {@code key} owns now, in the order the pod lists them. */
    private List<IpAddress> computeOwned(PodKey key) {
        Pod pod = pods.get(key);
        if (pod == null || !pod.policyEndpoint() || pod.ips().isEmpty()) {
            return List.of();
        }
        List<IpAddress> owned = new ArrayList<>();
        for (IpAddress ip : pod.ips()) {
            if (key.equals(claimants.owner(ip)) && !owned.contains(ip)) {
                owned.add(ip);
            }
        }
        return List.copyOf(owned);
    }

    /**
     * Recomputes what the pod owns and its identity, and every row that shows them: its address rows
     * and its local-pod row. An address it no longer owns is removed only if nobody claims it; else the
     * new owner, which is refreshed in the same event, rewrites it.
     */
    private void refreshIdentityAndRows(PodKey key) {
        List<IpAddress> owned = computeOwned(key);
        List<IpAddress> ownedBefore = owned.isEmpty() ? ownedAddresses.remove(key) : ownedAddresses.put(key, owned);
        Identity wanted = owned.isEmpty() ? null : identityOf(pods.get(key));
        IdentityId before = podIdentity.get(key);
        IdentityId id = before;
        if (!Objects.equals(wanted, before == null ? null : identityRows.get(before))) {
            // Take the new identity before letting go of the old, so a number is never reused within
            // one change: a backend sees one identity appear and another go, never a number change meaning.
            id = wanted == null ? null : acquireIdentity(key, wanted);
            if (before != null) {
                releaseIdentity(key, before);
            }
        }
        for (IpAddress ip : owned) {
            addressRows.put(ip, id);
        }
        if (ownedBefore != null) {
            for (IpAddress ip : ownedBefore) {
                if (!owned.contains(ip) && !claimants.claimed(ip)) {
                    addressRows.remove(ip);
                }
            }
        }
        refreshPodRow(key);
    }

    private Identity identityOf(Pod pod) {
        Map<PortMatch.NamedPort, Integer> namedPorts = new HashMap<>();
        for (ContainerPort p : pod.ports()) {
            if (p.name() != null) {
                namedPorts.putIfAbsent(new PortMatch.NamedPort(p.protocol(), p.name()), p.port());
            }
        }
        return new Identity(pod.namespace(), namespaceOf(pod.namespace()).labels(), pod.labels(), namedPorts);
    }

    private IdentityId acquireIdentity(PodKey pod, Identity identity) {
        IdentityId id = identityIds.get(identity);
        if (id == null) {
            int n = usedIds.nextClearBit(IdentityId.FIRST);
            usedIds.set(n);
            id = new IdentityId(n);
            identityIds.put(identity, id);
            identityRows.put(id, identity);
            selectorIndex.addIdentity(identity, id);
            for (PeerSetKey.SelectorPeers set : selectorIndex.setsFor(identity.namespace())) {
                if (set.matches(identity)) {
                    members.add(set, id);
                }
            }
        }
        Multimaps.add(identityPods, id, pod);
        podIdentity.put(pod, id);
        return id;
    }

    private void releaseIdentity(PodKey pod, IdentityId id) {
        if (id.equals(podIdentity.get(pod))) {
            podIdentity.remove(pod);
        }
        Set<PodKey> holders = identityPods.get(id);
        holders.remove(pod);
        if (holders.isEmpty()) {
            identityPods.remove(id);
            Identity identity = identityRows.get(id);
            identityIds.remove(identity);
            selectorIndex.removeIdentity(identity, id);
            identityRows.remove(id);
            members.removeIdentity(id);
            usedIds.clear(id.value());
        }
    }

    private boolean isLocalEndpoint(Pod pod) {
        return pod != null && pod.policyEndpoint() && (nodeName == null || nodeName.equals(pod.nodeName()));
    }

    /** Which policies of its namespace select the pod, if it is a local endpoint. */
    private void refreshTargets(PodKey key) {
        Pod pod = pods.get(key);
        Set<PolicyKey> now = new HashSet<>();
        if (isLocalEndpoint(pod)) {
            for (PolicyKey p : policiesByNamespace.getOrDefault(key.namespace(), Set.of())) {
                if (policies.get(p).podSelector().matches(pod.labels())) {
                    now.add(p);
                }
            }
        }
        Set<PolicyKey> before = podPolicies.getOrDefault(key, Set.of());
        for (PolicyKey p : before) {
            if (!now.contains(p)) {
                Multimaps.remove(policyTargets, p, key);
            }
        }
        for (PolicyKey p : now) {
            if (!before.contains(p)) {
                Multimaps.add(policyTargets, p, key);
            }
        }
        if (now.isEmpty()) {
            podPolicies.remove(key);
        } else {
            podPolicies.put(key, now);
        }
    }

    private void refreshPodRow(PodKey key) {
        Pod pod = pods.get(key);
        IdentityId id = podIdentity.get(key);
        List<IpAddress> owned = ownedAddresses.getOrDefault(key, List.of());
        if (!isLocalEndpoint(pod) || id == null || owned.isEmpty()) {
            podRows.remove(key);
            return;
        }
        List<PolicyKey> ingress = new ArrayList<>();
        List<PolicyKey> egress = new ArrayList<>();
        for (PolicyKey p : new TreeSet<>(podPolicies.getOrDefault(key, Set.of()))) {
            CompiledPolicy compiled = policyRows.get(p);
            if (compiled.isolates(Direction.INGRESS)) {
                ingress.add(p);
            }
            if (compiled.isolates(Direction.EGRESS)) {
                egress.add(p);
            }
        }
        podRows.put(key, new LocalPod(key, owned, id, ingress, egress, limits.getOrDefault(key, BandwidthLimits.NONE), congestion.get(key),
                clusterPolicies.tiers(key, clusterPolicyRows::get)));
    }

    // ---- policies ---------------------------------------------------------------------------

    private void policyChanged(PolicyKey key, NormalizedPolicy policy) {
        ObjectRef ref = ObjectRef.of(key);
        if (policy == null) {
            policies.remove(key);
            Multimaps.remove(policiesByNamespace, key.namespace(), key);
            errors.remove(ref);
        } else {
            policies.put(key, policy);
            Multimaps.add(policiesByNamespace, key.namespace(), key);
            if (policy.valid()) {
                errors.remove(ref);
            } else {
                errors.put(ref, policy.errors());
            }
        }

        CompiledPolicy before = policyRows.get(key);
        Set<PeerSetKey> oldSets = before == null ? Set.of() : before.peerSets();
        Set<PeerSetKey> newSets = policy == null ? Set.of() : policy.compiled().peerSets();
        for (PeerSetKey set : newSets) {
            if (!oldSets.contains(set)) {
                referenceSet(set);
            }
        }
        if (policy == null) {
            policyRows.remove(key);
        } else {
            policyRows.put(key, policy.compiled());
        }
        for (PeerSetKey set : oldSets) {
            if (!newSets.contains(set)) {
                dereferenceSet(set);
            }
        }

        Set<PodKey> newTargets = new HashSet<>();
        if (policy != null) {
            for (PodKey podKey : targetsByLabel.candidates(key.namespace(), policy.podSelector())) {
                Pod pod = pods.get(podKey);
                if (policy.podSelector().matches(pod.labels())) {
                    newTargets.add(podKey);
                }
            }
        }
        Set<PodKey> oldTargets = policyTargets.getOrDefault(key, Set.of());
        Set<PodKey> touched = new HashSet<>(oldTargets);
        touched.addAll(newTargets);
        for (PodKey podKey : oldTargets) {
            if (!newTargets.contains(podKey)) {
                Multimaps.remove(podPolicies, podKey, key);
            }
        }
        for (PodKey podKey : newTargets) {
            Multimaps.add(podPolicies, podKey, key);
        }
        if (newTargets.isEmpty()) {
            policyTargets.remove(key);
        } else {
            policyTargets.put(key, newTargets);
        }
        for (PodKey podKey : touched) {
            refreshPodRow(podKey);
        }
    }

    // ---- ClusterNetworkPolicies --------------------------------------------------------------

    /** Which ClusterNetworkPolicies select the pod, if it is a local endpoint. */
    private void refreshClusterTargets(PodKey key) {
        Pod pod = pods.get(key);
        clusterPolicies.refreshPod(key, isLocalEndpoint(pod) ? pod : null, namespaceOf(key.namespace()));
    }

    private void clusterPolicyChanged(String name, NormalizedClusterPolicy policy) {
        clusterPolicies.put(name, policy);
        Set<PodKey> now = new HashSet<>();
        if (policy != null) {
            for (PodKey key : localEndpoints) {
                Pod pod = pods.get(key);
                if (policy.subject().selects(pod, namespaceOf(key.namespace()))) {
                    now.add(key);
                }
            }
        }
        Set<PodKey> before = clusterPolicies.retarget(name, now);
        replaceClusterPolicyRow(name, policy == null ? null : clusterPolicies.compile(policy));
        Set<PodKey> touched = new HashSet<>(before);
        touched.addAll(now);
        touched.forEach(this::refreshPodRow); // a priority edit changes only their order
    }

    /** The policy's row again (its nodes peers' addresses may have changed), and its pods' lists. */
    private void recompileClusterPolicy(String name) {
        replaceClusterPolicyRow(name, clusterPolicies.compile(clusterPolicies.policy(name)));
        clusterPolicies.targets(name).forEach(this::refreshPodRow);
    }

    /** Sets the row, referencing its new sets before and releasing its old ones after, as for NetworkPolicies. */
    private void replaceClusterPolicyRow(String name, CompiledClusterPolicy row) {
        CompiledClusterPolicy before = clusterPolicyRows.get(name);
        Set<PeerSetKey> oldSets = before == null ? Set.of() : before.peerSets();
        Set<PeerSetKey> newSets = row == null ? Set.of() : row.peerSets();
        for (PeerSetKey set : newSets) {
            if (!oldSets.contains(set)) {
                referenceSet(set);
            }
        }
        if (row == null) {
            clusterPolicyRows.remove(name);
        } else {
            clusterPolicyRows.put(name, row);
        }
        for (PeerSetKey set : oldSets) {
            if (!newSets.contains(set)) {
                dereferenceSet(set);
            }
        }
    }

    private void referenceSet(PeerSetKey set) {
        if (setReferences.merge(set, 1, Integer::sum) > 1) {
            return;
        }
        setRows.put(set, Boolean.TRUE);
        if (set instanceof PeerSetKey.SelectorPeers s) {
            selectorIndex.addSet(s);
            for (IdentityId id : selectorIndex.identitiesFor(s)) {
                if (s.matches(identityRows.get(id))) {
                    members.add(set, id);
                }
            }
        }
    }

    private void dereferenceSet(PeerSetKey set) {
        if (setReferences.merge(set, -1, Integer::sum) > 0) {
            return;
        }
        setReferences.remove(set);
        if (set instanceof PeerSetKey.SelectorPeers s) {
            selectorIndex.removeSet(s);
        }
        members.removeSet(set);
        setRows.remove(set);
    }
}
