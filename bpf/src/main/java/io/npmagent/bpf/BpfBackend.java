package io.npmagent.bpf;

import io.npmagent.bpf.libbpf.BpfException;
import io.npmagent.bpf.libbpf.BpfMap;
import io.npmagent.bpf.libbpf.BpfObject;
import io.npmagent.bpf.libbpf.BpfProgram;
import io.npmagent.bpf.libbpf.NetfilterLink;
import io.npmagent.bpf.libbpf.NetnsThread;
import io.npmagent.bpf.libbpf.Tc;
import io.npmagent.bpf.maps.BandwidthConfigMap;
import io.npmagent.bpf.maps.BandwidthStatsMap;
import io.npmagent.bpf.maps.DropMap;
import io.npmagent.bpf.maps.EndpointMap;
import io.npmagent.bpf.maps.LocalAddressMap;
import io.npmagent.bpf.maps.IpcacheMap;
import io.npmagent.bpf.maps.PolicyMap;
import io.npmagent.bpf.maps.StateMap;
import io.npmagent.bpf.model.BpfModel;
import io.npmagent.bpf.model.PolicyEntry;
import io.npmagent.bpf.model.Rendered;
import io.npmagent.dataplane.backend.Backend;
import io.npmagent.dataplane.backend.BackendException;
import io.npmagent.dataplane.backend.BackendStatus;
import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.bandwidth.BandwidthSettings;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.exec.CommandRunner;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * The main backend: tc programs on each local pod's host-side interface, judging from pinned maps.
 *
 * <p><b>A batch's fate</b> ({@link #apply}): the {@link BpfModel} takes the batch and renders what
 * every map should hold. The maps are double-buffered (a version bit in every key; {@code npm_state}
 * says which copy packets read): the copy packets do not read is brought to the new state (the
 * difference since it was last written, one batched write per map), then the state flips (one map
 * write: from then on every packet sees the whole new state). The copy left behind is brought up to
 * date by the next batch, as it becomes the one written. Then programs are attached to the
 * interfaces of pods that appeared. A packet never sees half a batch. A write refused before the
 * flip fails the batch (no packet saw any of it; the model takes the batch back, and the copy is read
 * again at the next call).
 *
 * <p><b>Restart.</b> Maps are pinned under the backend's bpffs directory and tc filters stay on their
 * interfaces, so a killed agent leaves enforcement in place. A new one adopts the pinned maps (libbpf
 * reuses them by name), reads both copies back, and writes only what differs from the desired state:
 * a restart with nothing changed writes no entry. Its freshly loaded programs replace the old ones on
 * each interface in place ({@code BPF_TC_F_REPLACE}), never leaving an interface without one.
 * {@link #uninstall} detaches and unpins everything.
 *
 * <p><b>Threads.</b> One flush thread calls it; tc calls run on a thread inside the node's network
 * namespace ({@link NetnsThread}); the scrape thread reads the drop counters.
 */
public final class BpfBackend implements Backend {
    private static final System.Logger LOG = System.getLogger(BpfBackend.class.getName());
    static final String OBJECT = "tc_pod.o";
    static final String FROM_POD = "npm_from_pod";
    static final String TO_POD = "npm_to_pod";

    private final Path pinDir;
    private final Metrics metrics;
    private final BpfMap state;
    private final BpfMap endpoints;
    private final BpfMap local;
    private final BpfMap ipcache;
    private final BpfMap policy;
    private final BpfMap drops;
    private final BpfMap bandwidthStats;
    private final BpfProgram fromPod;
    private final BpfProgram toPod;
    /** The netfilter forward hook, null on a kernel without netfilter programs (then tc judges all). */
    private final ForwardHooks forward;
    private static final String NO_NETFILTER = "this kernel loads no netfilter programs (BPF_PROG_TYPE_NETFILTER, Linux 6.4): "
            + "egress to addresses that are no pod is judged before DNAT, so a policy admitting a Service's pods does not admit its ClusterIP";
    private final String netnsName;
    private final NetnsThread netns;
    private final CommandRunner ip;
    private final PodInterfaces podInterfaces;
    private final BpfModel model = new BpfModel();

    /** What the kernel holds, per copy of the state: read back at start and after a refusal, then kept. */
    private final Copy[] copies = {new Copy(), new Copy()};
    /** Per copy, the keys that may differ from what is wanted since the copy was last written. */
    private final Journal[] journals = {new Journal(), new Journal()};
    private int active;
    private boolean readBack;
    /** Whether a converge has run: the first redoes everything. */
    private boolean primed;
    /** Whether pins of another layout were set aside at start, to remove once our programs replaced theirs. */
    private boolean setAside;

    // What every versioned map should hold, in no copy in particular, kept from render to render.
    private final Map<Integer, EndpointMap.Value> wantEndpoints = new HashMap<>();
    /** Placed local pods' addresses to their interfaces (npm_local: the forward hook's way to a pod on a bridge). */
    private final Map<IpAddress, Integer> wantLocal = new HashMap<>();
    private final Map<Cidr, Integer> wantIpcache = new HashMap<>();
    private Set<PolicyEntry> wantPolicy = Set.of();
    private Set<IpAddress> nodeAddresses = Set.of();
    /** Placed local pods by interface and back. */
    private final Map<Integer, PodKey> podOfInterface = new HashMap<>();
    private final Map<PodKey, Integer> interfaceOfPod = new HashMap<>();
    private final Map<PodKey, List<IpAddress>> addressesOfPod = new HashMap<>();

    /** Interfaces this run attached its programs to, and the pod behind each. */
    private final Map<Integer, PodKey> attached = new HashMap<>();
    /** Local pods whose interface was not found: not enforced by us yet. */
    private final Set<PodKey> unplaced = new HashSet<>();
    private volatile Map<Integer, PodKey> podByEndpoint = Map.of();

    /** One copy of the versioned maps, without the version bit. */
    private static final class Copy {
        final Map<Integer, EndpointMap.Value> endpoints = new HashMap<>();
        final Map<IpAddress, Integer> local = new HashMap<>();
        final Map<Cidr, Integer> ipcache = new HashMap<>();
        /** Entry to its value (always 1: the number of rules is not kept). */
        final Map<PolicyEntry, Integer> policy = new HashMap<>();
    }

    /**
     * The keys of one copy that may differ from what is wanted: those a render changed since the copy
     * was last written, or {@code all} after a read-back or a full render. A batch compares and writes
     * only these, not the whole state.
     */
    private static final class Journal {
        boolean all = true;
        final Set<Integer> endpoints = new HashSet<>();
        final Set<IpAddress> local = new HashSet<>();
        final Set<Cidr> ipcache = new HashSet<>();
        final Set<PolicyEntry> policy = new HashSet<>();

        void everything() {
            clear();
            all = true;
        }

        void clear() {
            all = false;
            endpoints.clear();
            local.clear();
            ipcache.clear();
            policy.clear();
        }

        boolean isEmpty() {
            return !all && endpoints.isEmpty() && local.isEmpty() && ipcache.isEmpty() && policy.isEmpty();
        }
    }

    /**
     * Loads the programs and adopts or creates the pinned maps.
     *
     * @param pinDir where maps and programs are pinned (a directory on a bpffs mount)
     * @param netns  the network namespace of the pods' interfaces (null: this process's)
     * @param ip     runs {@code ip} and {@code bridge} in that namespace, to find pods' interfaces
     * @param bandwidth how the programs hold pods to their rate limits
     */
    public BpfBackend(Path pinDir, String netns, CommandRunner ip, BandwidthSettings bandwidth, Metrics metrics) {
        this.pinDir = pinDir;
        this.metrics = metrics;
        try {
            Files.createDirectories(pinDir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the pin directory " + pinDir, e);
        }
        boolean netfilter = NetfilterLink.programsSupported();
        BpfProgram forwardProgram = null;
        BpfMap forwardHooks = null;
        try (BpfObject object = BpfObject.open(BpfObject.resource(OBJECT), "npm_agent", pinDir)) {
            setAside = !PinnedMaps.setAsideIncompatible(object, pinDir).isEmpty();
            object.prepareProgram(ForwardHooks.PROGRAM, netfilter, NetfilterLink.PROG_TYPE_NETFILTER, NetfilterLink.ATTACH_NETFILTER);
            object.load();
            this.state = object.map(StateMap.NAME);
            this.endpoints = object.map(EndpointMap.NAME);
            this.local = object.map(LocalAddressMap.NAME);
            this.ipcache = object.map(IpcacheMap.NAME);
            this.policy = object.map(PolicyMap.NAME);
            this.drops = object.map(DropMap.NAME);
            this.bandwidthStats = object.map(BandwidthStatsMap.NAME);
            try (BpfMap config = object.map(BandwidthConfigMap.NAME)) {
                config.update(BandwidthConfigMap.key(),
                        BandwidthConfigMap.value(bandwidth.horizon(), bandwidth.ecnThreshold(), bandwidth.ingressBurst()));
            }
            this.fromPod = object.program(FROM_POD);
            this.toPod = object.program(TO_POD);
            forwardHooks = object.map(ForwardHooks.MAP);
            if (netfilter) {
                forwardProgram = object.program(ForwardHooks.PROGRAM);
            }
        }
        pin(fromPod, "prog_" + FROM_POD);
        pin(toPod, "prog_" + TO_POD);
        this.netnsName = netns;
        this.netns = NetnsThread.enter(netns);
        if (forwardProgram != null) {
            pin(forwardProgram, "prog_" + ForwardHooks.PROGRAM);
            this.forward = ForwardHooks.attach(forwardProgram, forwardHooks, pinDir, this.netns);
        } else {
            ForwardHooks.writeBits(forwardHooks, 0); // no hook: tc judges every packet itself
            forwardHooks.close();
            this.forward = null;
        }
        this.ip = ip;
        this.podInterfaces = new PodInterfaces(new InterfaceResolver(ip));
        metrics.policyDropsFrom(this::dropCounts);
        metrics.bandwidthFrom(this::bandwidthCounts);
    }

    /** Pins this run's program where the last run's was (for bpftool and for uninstall to find). */
    private void pin(BpfProgram program, String name) {
        Path at = pinDir.resolve(name);
        try {
            Files.deleteIfExists(at);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot replace the pin " + at, e);
        }
        program.pin(at);
    }

    @Override
    public String name() {
        return "bpf";
    }

    @Override
    public boolean enforcesBandwidth() {
        return true;
    }

    @Override
    public synchronized void apply(Batch batch) {
        model.apply(batch.delta());
        try {
            if (!readBack) {
                readBack();
            }
            converge(false);
        } catch (BpfException | BackendException e) {
            model.apply(batch.delta().inverse());
            readBack = false; // learn at the next call what the refused write left in the copy packets do not read
            throw e instanceof BackendException b ? b : new BackendException(e.getMessage(), "", e);
        } finally {
            updateGauges();
        }
    }

    /** Reads every map back, then does what {@link #quickReconcile} does; the maps then match the model. */
    @Override
    public synchronized int reconcile() {
        readBack();
        return quickReconcile();
    }

    /**
     * Looks for every local pod's interface again and checks the programs' attachment, which a CNI or a
     * restarted pod can undo at any moment; writes what that changed. The maps themselves only this agent
     * writes; reading them back (at 100,000 pods, seconds: the LPM ipcache has no batch read) is left to
     * the full {@link #reconcile}.
     */
    @Override
    public synchronized int quickReconcile() {
        int repaired = converge(true);
        if (forward != null) {
            repaired += forward.repair();
        }
        // Idle time: the copy packets do not read catches up, so the next batch writes only its own change.
        write(1 - active);
        for (Map.Entry<Integer, PodKey> e : new ArrayList<>(attached.entrySet())) {
            if (!ours(e.getKey())) {
                LOG.log(System.Logger.Level.WARNING, "bpf: the programs on interface {0} ({1}) were replaced or removed; attaching again",
                        e.getKey(), e.getValue());
                attach(e.getKey(), e.getValue());
                repaired++;
            }
        }
        updateGauges();
        return repaired;
    }

    @Override
    public synchronized void uninstall() {
        closeHandles();
        attached.clear();
        uninstall(pinDir, netnsName, ip);
    }

    /**
     * Removes everything any run of this backend left in namespace {@code netns} and under
     * {@code pinDir}, without loading anything: our filter (known by its handle and priority) from every
     * interface that has one, whichever pods' they were, the neighbour entries it made for bridged pods,
     * then every pin. Enforcement ends here.
     */
    public static void uninstall(Path pinDir, String netns, CommandRunner ip) {
        List<Integer> links = InterfaceResolver.allInterfaces(ip);
        InterfaceResolver.releaseAll(ip);
        try (NetnsThread inside = NetnsThread.enter(netns)) {
            inside.run(() -> links.forEach(BpfBackend::detach));
        }
        if (!Files.exists(pinDir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(pinDir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new BackendException("cannot unpin " + pinDir + ": " + e.getMessage(), "");
        }
    }

    @Override
    public synchronized BackendStatus status() {
        Copy c = copies[active];
        return new BackendStatus(name(), model.policyCount(), c.policy.size(), c.endpoints.size(), c.ipcache.size());
    }

    /** Null when egress to Services is judged after DNAT in both families; else what is not, and why. */
    public synchronized String forwardHookProblem() {
        return forward == null ? NO_NETFILTER : forward.problem();
    }

    /** Local pods whose interface was not found at the last batch or reconcile, so not enforced yet. */
    public synchronized Set<PodKey> unplaced() {
        return Set.copyOf(unplaced);
    }

    @Override
    public synchronized void close() {
        closeHandles();
    }

    private void closeHandles() {
        for (AutoCloseable c : new AutoCloseable[] {state, endpoints, local, ipcache, policy, drops, bandwidthStats, fromPod, toPod, forward, netns}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                LOG.log(System.Logger.Level.DEBUG, "bpf: closing {0}: {1}", c, e.getMessage());
            }
        }
    }

    // ---- converging -------------------------------------------------------------------------------

    /**
     * Renders; if the copy packets read differs from it, writes the other copy and flips.
     * {@code rescan}: look every pod's interface up again, not only new pods'.
     */
    private int converge(boolean rescan) {
        Rendered r = model.render();
        Rendered.Changes changes = r.changes();
        boolean everything = changes.all() || !primed;
        primed = true;
        wantPolicy = r.policy();

        // Interfaces of the pods that changed and of those not found yet (all, at a rescan or when everything
        // is redone). A rescan compares only the endpoints it touches: the ipcache and policy entries of
        // 100,000 pods are compared after a read-back, not every period.
        boolean placeAll = everything || rescan;
        Set<PodKey> candidates = new HashSet<>(placeAll ? r.endpoints().keySet() : changes.pods());
        candidates.addAll(unplaced);
        if (placeAll) {
            candidates.addAll(interfaceOfPod.keySet());
        }
        Map<PodKey, Integer> found = podInterfaces.place(r.endpoints(), candidates, rescan || changes.all());
        Set<Integer> touchedInterfaces = new HashSet<>();
        Set<IpAddress> touchedAddresses = new HashSet<>();
        for (PodKey pod : candidates) { // first every old place, so an interface a pod leaves can take another
            Integer old = interfaceOfPod.remove(pod);
            if (old != null) {
                podOfInterface.remove(old);
                wantEndpoints.remove(old);
                touchedInterfaces.add(old);
                for (IpAddress a : addressesOfPod.remove(pod)) {
                    wantLocal.remove(a, old);
                    touchedAddresses.add(a);
                }
            }
        }
        for (PodKey pod : candidates) {
            Rendered.Endpoint ep = r.endpoints().get(pod);
            Integer ifindex = found.get(pod);
            unplaced.remove(pod);
            if (ep != null && ifindex == null) {
                unplaced.add(pod);
            } else if (ep != null) {
                interfaceOfPod.put(pod, ifindex);
                podOfInterface.put(ifindex, pod);
                wantEndpoints.put(ifindex, new EndpointMap.Value(ep.id(), ep.ingressIsolated(), ep.egressIsolated(),
                        ep.bandwidth().ingressBitsPerSecond(), ep.bandwidth().egressBitsPerSecond()));
                touchedInterfaces.add(ifindex);
                addressesOfPod.put(pod, ep.ips());
                for (IpAddress a : ep.ips()) {
                    wantLocal.put(a, ifindex);
                    touchedAddresses.add(a);
                }
            }
        }
        if (!unplaced.isEmpty() && !candidates.isEmpty()) {
            LOG.log(System.Logger.Level.INFO, "bpf: no interface found yet for {0} local pods (first: {1}); looked for again at the next batch",
                    unplaced.size(), unplaced.iterator().next());
        }
        Set<IpAddress> node = podInterfaces.nodeAddresses();
        if (everything || !node.equals(nodeAddresses)) {
            nodeAddresses = node;
            wantIpcache.clear();
            wantIpcache.putAll(r.ipcache());
            for (IpAddress a : node) {
                wantIpcache.put(Cidr.host(a), BpfModel.HOST);
            }
            everything = true;
        }

        for (Journal j : journals) {
            if (everything) {
                j.everything();
            } else if (!j.all) {
                j.endpoints.addAll(touchedInterfaces);
                j.local.addAll(touchedAddresses);
                j.policy.addAll(changes.policy());
            }
        }
        int written = 0;
        if (differs(active)) {
            // The copy packets do not read is brought up to date (what changed since it was last
            // written: this batch and the one before), then packets switch to it. The other copy is left
            // as it is until the next batch writes it.
            int next = 1 - active;
            written += write(next);
            state.update(StateMap.key(), StateMap.value(next));
            active = next;
        } else {
            journals[active].clear(); // it holds what is wanted already
        }
        if (everything) {
            touchedInterfaces.addAll(attached.keySet());
            touchedInterfaces.addAll(podOfInterface.keySet());
        }
        attachAndDetach(touchedInterfaces);
        if (setAside) {
            PinnedMaps.removeSetAside(pinDir); // every placed pod's interface now runs our programs
            setAside = false;
        }
        if (everything || !touchedInterfaces.isEmpty()) {
            Map<Integer, PodKey> byEndpoint = new HashMap<>();
            podOfInterface.forEach((ifindex, pod) -> byEndpoint.put(wantEndpoints.get(ifindex).id(), pod));
            podByEndpoint = byEndpoint;
        }
        return written;
    }

    /** Attaches our programs to those of {@code interfaces} that carry a pod, and detaches them from the others. */
    private void attachAndDetach(Set<Integer> interfaces) {
        for (int ifindex : interfaces) {
            PodKey pod = podOfInterface.get(ifindex);
            if (pod != null && !attached.containsKey(ifindex)) {
                attach(ifindex, pod);
            } else if (pod != null) {
                attached.put(ifindex, pod);
            } else if (attached.remove(ifindex) != null) {
                netns.run(() -> detach(ifindex));
            }
        }
    }

    /** Attaches both programs; an interface that vanished meanwhile is left for the next converge. */
    private void attach(int ifindex, PodKey pod) {
        try {
            netns.run(() -> {
                Tc.attach(ifindex, Tc.Hook.INGRESS, fromPod);
                Tc.attach(ifindex, Tc.Hook.EGRESS, toPod);
            });
            attached.put(ifindex, pod);
        } catch (BpfException e) {
            unplaced.add(pod);
            LOG.log(System.Logger.Level.WARNING, "bpf: cannot attach to interface {0} of {1}, tried again at the next batch: {2}",
                    ifindex, pod, e.getMessage());
        }
    }

    private static void detach(int ifindex) {
        try {
            Tc.detach(ifindex, Tc.Hook.INGRESS);
            Tc.detach(ifindex, Tc.Hook.EGRESS);
        } catch (BpfException gone) {
            // the interface went with its filters
        }
    }

    private boolean ours(int ifindex) {
        return netns.get(() -> Tc.attachedProgramId(ifindex, Tc.Hook.INGRESS) == fromPod.id()
                && Tc.attachedProgramId(ifindex, Tc.Hook.EGRESS) == toPod.id());
    }

    /**
     * Brings copy {@code v} to the wanted contents, looking only at the keys its journal names (all,
     * after a read-back); returns how many entries it wrote or deleted.
     */
    private int write(int v) {
        Copy have = copies[v];
        Journal j = journals[v];
        int changed = 0;
        changed += sync(ipcache, IpcacheMap.NAME, have.ipcache, keys(j.all, have.ipcache.keySet(), wantIpcache.keySet(), j.ipcache),
                wantIpcache::get, k -> new IpcacheMap.Key(v, k).encode(), IpcacheMap::value);
        changed += sync(policy, PolicyMap.NAME, have.policy, keys(j.all, have.policy.keySet(), wantPolicy, j.policy),
                this::wantedRules, e -> e.key(v).encode(), PolicyMap::value);
        changed += sync(endpoints, EndpointMap.NAME, have.endpoints,
                keys(j.all, have.endpoints.keySet(), wantEndpoints.keySet(), j.endpoints), wantEndpoints::get,
                k -> new EndpointMap.Key(k, v).encode(), EndpointMap.Value::encode);
        changed += sync(local, LocalAddressMap.NAME, have.local, keys(j.all, have.local.keySet(), wantLocal.keySet(), j.local),
                wantLocal::get, k -> new LocalAddressMap.Key(v, k).encode(), LocalAddressMap::value);
        j.clear();
        return changed;
    }

    /** Whether copy {@code v} holds anything other than what is wanted, among the keys its journal names. */
    private boolean differs(int v) {
        Copy have = copies[v];
        Journal j = journals[v];
        return differs(have.ipcache, keys(j.all, have.ipcache.keySet(), wantIpcache.keySet(), j.ipcache), wantIpcache::get)
                || differs(have.policy, keys(j.all, have.policy.keySet(), wantPolicy, j.policy), this::wantedRules)
                || differs(have.endpoints, keys(j.all, have.endpoints.keySet(), wantEndpoints.keySet(), j.endpoints), wantEndpoints::get)
                || differs(have.local, keys(j.all, have.local.keySet(), wantLocal.keySet(), j.local), wantLocal::get);
    }

    private Integer wantedRules(PolicyEntry e) {
        return wantPolicy.contains(e) ? 1 : null;
    }

    private static <K> Collection<K> keys(boolean all, Set<K> have, Set<K> want, Set<K> journal) {
        if (!all) {
            return journal;
        }
        Set<K> out = new HashSet<>(have);
        out.addAll(want);
        return out;
    }

    private static <K, V> boolean differs(Map<K, V> have, Collection<K> keys, Function<K, V> want) {
        for (K k : keys) {
            if (!java.util.Objects.equals(want.apply(k), have.get(k))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Writes what is wanted for {@code keys} where it differs from {@code have}: additions and changes
     * in one batched call, then deletions in another; {@code have} follows what landed. Returns the
     * entries written or deleted.
     */
    private <K, V> int sync(BpfMap map, String name, Map<K, V> have, Collection<K> keys, Function<K, V> want,
            Function<K, byte[]> key, Function<V, byte[]> value) {
        List<K> put = new ArrayList<>();
        List<K> gone = new ArrayList<>();
        for (K k : keys) {
            V w = want.apply(k);
            V h = have.get(k);
            if (w != null && !w.equals(h)) {
                put.add(k);
            } else if (w == null && h != null) {
                gone.add(k);
            }
        }
        if (put.isEmpty() && gone.isEmpty()) {
            return 0;
        }
        long start = System.nanoTime();
        try {
            if (!put.isEmpty()) {
                map.updateBatch(put.stream().map(key).toList(), put.stream().map(k -> value.apply(want.apply(k))).toList());
                put.forEach(k -> have.put(k, want.apply(k)));
            }
            if (!gone.isEmpty()) {
                map.deleteBatch(gone.stream().map(key).toList());
                gone.forEach(have::remove);
            }
        } finally {
            metrics.bpfMapUpdateLatency.labelValues(name).observe(Metrics.secondsSince(start));
        }
        return put.size() + gone.size();
    }

    /** Reads both copies of every versioned map, and which copy is active, from the kernel. */
    private void readBack() {
        for (Copy c : copies) {
            c.endpoints.clear();
            c.local.clear();
            c.ipcache.clear();
            c.policy.clear();
        }
        byte[] s = state.lookup(StateMap.key());
        active = s == null ? 0 : StateMap.version(s) & 1;
        for (byte[][] kv : endpoints.entries()) {
            EndpointMap.Key k = EndpointMap.Key.decode(kv[0]);
            copies[k.version() & 1].endpoints.put(k.ifindex(), EndpointMap.Value.decode(kv[1]));
        }
        for (byte[][] kv : local.entries()) {
            LocalAddressMap.Key k = LocalAddressMap.Key.decode(kv[0]);
            copies[k.version() & 1].local.put(k.address(), LocalAddressMap.ifindex(kv[1]));
        }
        for (byte[][] kv : ipcache.entries()) {
            IpcacheMap.Key k = IpcacheMap.Key.decode(kv[0]);
            copies[k.version() & 1].ipcache.put(k.prefix(), IpcacheMap.identity(kv[1]));
        }
        for (byte[][] kv : policy.entries()) {
            PolicyMap.Key k = PolicyMap.Key.decode(kv[0]);
            copies[k.version() & 1].policy.put(PolicyEntry.of(k), PolicyMap.rules(kv[1]));
        }
        for (Journal j : journals) {
            j.everything();
        }
        readBack = true;
    }

    private Map<List<String>, long[]> dropCounts() {
        return perPod(drops, v -> {
            DropMap.Value d = DropMap.Value.sumPerCpu(v);
            return new long[] {d.packets(), d.bytes()};
        });
    }

    private Map<List<String>, long[]> bandwidthCounts() {
        return perPod(bandwidthStats, v -> {
            BandwidthStatsMap.Value b = BandwidthStatsMap.Value.sumPerCpu(v);
            return new long[] {b.packets(), b.bytes(), b.marked(), b.horizonDrops(), b.policed()};
        });
    }

    /** A per-CPU map keyed by endpoint and direction, summed and labelled by pod and direction, for a scrape. */
    private Map<List<String>, long[]> perPod(BpfMap map, Function<byte[], long[]> sum) {
        Map<Integer, PodKey> byEndpoint = podByEndpoint;
        Map<List<String>, long[]> out = new HashMap<>();
        List<byte[][]> entries;
        try {
            entries = map.entries();
        } catch (BpfException closed) {
            return out; // the backend was closed or uninstalled: nothing to count any more
        }
        for (byte[][] kv : entries) {
            DropMap.Key k = DropMap.Key.decode(kv[0]);
            PodKey pod = byEndpoint.get(k.endpoint());
            if (pod != null) {
                out.put(List.of(pod.toString(), k.direction() == 0 ? "ingress" : "egress"), sum.apply(kv[1]));
            }
        }
        return out;
    }

    private void updateGauges() {
        gauge(PolicyMap.NAME, copies[0].policy.size() + copies[1].policy.size(), policy.maxEntries());
        gauge(IpcacheMap.NAME, copies[0].ipcache.size() + copies[1].ipcache.size(), ipcache.maxEntries());
        gauge(EndpointMap.NAME, copies[0].endpoints.size() + copies[1].endpoints.size(), endpoints.maxEntries());
        gauge(LocalAddressMap.NAME, copies[0].local.size() + copies[1].local.size(), local.maxEntries());
    }

    private void gauge(String map, long entries, int max) {
        metrics.bpfMapEntries.labelValues(map).set(entries);
        metrics.bpfMapPressure.labelValues(map).set((double) entries / max);
    }
}
