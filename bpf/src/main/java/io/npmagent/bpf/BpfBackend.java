package io.npmagent.bpf;

import io.npmagent.bpf.libbpf.BpfException;
import io.npmagent.bpf.libbpf.BpfMap;
import io.npmagent.bpf.libbpf.BpfObject;
import io.npmagent.bpf.libbpf.BpfProgram;
import io.npmagent.bpf.libbpf.NetnsThread;
import io.npmagent.bpf.libbpf.Tc;
import io.npmagent.bpf.maps.DropMap;
import io.npmagent.bpf.maps.EndpointMap;
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
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.iptables.exec.CommandRunner;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
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
    private final BpfMap ipcache;
    private final BpfMap policy;
    private final BpfMap drops;
    private final BpfProgram fromPod;
    private final BpfProgram toPod;
    private final String netnsName;
    private final NetnsThread netns;
    private final CommandRunner ip;
    private final PodInterfaces podInterfaces;
    private final BpfModel model = new BpfModel();

    /** What the kernel holds, per copy of the state: read back at start and after a refusal, then kept. */
    private final Copy[] copies = {new Copy(), new Copy()};
    private int active;
    private boolean readBack;
    /** Interfaces this run attached its programs to, and the pod behind each. */
    private final Map<Integer, PodKey> attached = new HashMap<>();
    /** Local pods whose interface the last converge did not find: not enforced by us yet. */
    private final Set<PodKey> unplaced = new HashSet<>();
    private volatile Map<Integer, PodKey> podByEndpoint = Map.of();

    /** One copy of the versioned maps, without the version bit. */
    private static final class Copy {
        final Map<Integer, EndpointMap.Value> endpoints = new HashMap<>();
        final Map<Cidr, Integer> ipcache = new HashMap<>();
        /** Entry to its value (always 1: the number of rules is not kept). */
        final Map<PolicyEntry, Integer> policy = new HashMap<>();

        boolean holds(Wanted w) {
            return endpoints.equals(w.endpoints()) && ipcache.equals(w.ipcache()) && policy.equals(w.policy());
        }
    }

    /** What every versioned map should hold, in no copy in particular: the last converge's render. */
    private record Wanted(Map<Integer, EndpointMap.Value> endpoints, Map<Cidr, Integer> ipcache, Map<PolicyEntry, Integer> policy) {}

    private Wanted wanted = new Wanted(Map.of(), Map.of(), Map.of());

    /**
     * Loads the programs and adopts or creates the pinned maps.
     *
     * @param pinDir where maps and programs are pinned (a directory on a bpffs mount)
     * @param netns  the network namespace of the pods' interfaces (null: this process's)
     * @param ip     runs {@code ip} and {@code bridge} in that namespace, to find pods' interfaces
     */
    public BpfBackend(Path pinDir, String netns, CommandRunner ip, Metrics metrics) {
        this.pinDir = pinDir;
        this.metrics = metrics;
        try {
            Files.createDirectories(pinDir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the pin directory " + pinDir, e);
        }
        try (BpfObject object = BpfObject.open(BpfObject.resource(OBJECT), "npm_agent", pinDir)) {
            object.load();
            this.state = object.map(StateMap.NAME);
            this.endpoints = object.map(EndpointMap.NAME);
            this.ipcache = object.map(IpcacheMap.NAME);
            this.policy = object.map(PolicyMap.NAME);
            this.drops = object.map(DropMap.NAME);
            this.fromPod = object.program(FROM_POD);
            this.toPod = object.program(TO_POD);
        }
        pin(fromPod, "prog_" + FROM_POD);
        pin(toPod, "prog_" + TO_POD);
        this.netnsName = netns;
        this.netns = NetnsThread.enter(netns);
        this.ip = ip;
        this.podInterfaces = new PodInterfaces(new InterfaceResolver(ip));
        metrics.policyDropsFrom(this::dropCounts);
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

    @Override
    public synchronized int reconcile() {
        readBack();
        int repaired = converge(true);
        // Idle time: the copy packets do not read catches up, so the next batch writes only its own change.
        write(1 - active, wanted);
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
     * interface that has one, whichever pods' they were, then every pin. Enforcement ends here.
     */
    public static void uninstall(Path pinDir, String netns, CommandRunner ip) {
        List<Integer> links = InterfaceResolver.allInterfaces(ip);
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

    /** Local pods whose interface was not found at the last batch or reconcile, so not enforced yet. */
    public synchronized Set<PodKey> unplaced() {
        return Set.copyOf(unplaced);
    }

    @Override
    public synchronized void close() {
        closeHandles();
    }

    private void closeHandles() {
        for (AutoCloseable c : new AutoCloseable[] {state, endpoints, ipcache, policy, drops, fromPod, toPod, netns}) {
            try {
                c.close();
            } catch (Exception e) {
                LOG.log(System.Logger.Level.DEBUG, "bpf: closing {0}: {1}", c, e.getMessage());
            }
        }
    }

    // ---- converging -------------------------------------------------------------------------------

    /**
     * Renders; if the copy packets read differs, writes the inactive copy, flips, catches up the other.
     * {@code rescan}: look every pod's interface up again, not only new pods'.
     */
    private int converge(boolean rescan) {
        Rendered r = model.render();
        Map<PodKey, Integer> found = podInterfaces.place(r.endpoints(), rescan);
        Map<Integer, EndpointMap.Value> wantEndpoints = new HashMap<>();
        Map<Integer, PodKey> pods = new TreeMap<>();
        unplaced.clear();
        r.endpoints().forEach((pod, ep) -> {
            Integer ifindex = found.get(pod);
            if (ifindex == null) {
                unplaced.add(pod);
            } else {
                wantEndpoints.put(ifindex, new EndpointMap.Value(ep.id(), ep.ingressIsolated(), ep.egressIsolated()));
                pods.put(ifindex, pod);
            }
        });
        if (!unplaced.isEmpty()) {
            LOG.log(System.Logger.Level.INFO, "bpf: no interface found yet for {0} local pods (first: {1}); looked for again at the next batch",
                    unplaced.size(), unplaced.iterator().next());
        }
        Map<PolicyEntry, Integer> wantPolicy = new HashMap<>();
        r.policy().forEach(e -> wantPolicy.put(e, 1));
        Map<Cidr, Integer> wantIpcache = new HashMap<>(r.ipcache());
        for (IpAddress a : podInterfaces.nodeAddresses()) {
            wantIpcache.put(Cidr.host(a), BpfModel.HOST);
        }

        wanted = new Wanted(wantEndpoints, wantIpcache, wantPolicy);
        int written = 0;
        if (!copies[active].holds(wanted)) {
            // The copy packets do not read is brought up to date (what changed since it was last
            // written: this batch and the one before), then packets switch to it. The other copy is left
            // as it is until the next batch writes it.
            int next = 1 - active;
            written += write(next, wanted);
            state.update(StateMap.key(), StateMap.value(next));
            active = next;
        }
        Map<Integer, Integer> endpointOf = new HashMap<>();
        wantEndpoints.forEach((ifindex, v) -> endpointOf.put(v.id(), ifindex));
        attachAndDetach(pods);
        Map<Integer, PodKey> byEndpoint = new HashMap<>();
        endpointOf.forEach((id, ifindex) -> byEndpoint.put(id, pods.get(ifindex)));
        podByEndpoint = byEndpoint;
        return written;
    }

    private void attachAndDetach(Map<Integer, PodKey> pods) {
        for (Map.Entry<Integer, PodKey> e : pods.entrySet()) {
            if (!attached.containsKey(e.getKey())) {
                attach(e.getKey(), e.getValue());
            } else {
                attached.put(e.getKey(), e.getValue());
            }
        }
        for (int ifindex : new ArrayList<>(attached.keySet())) {
            if (!pods.containsKey(ifindex)) {
                netns.run(() -> detach(ifindex));
                attached.remove(ifindex);
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

    /** Brings copy {@code v} to the wanted contents; returns how many entries it wrote or deleted. */
    private int write(int v, Wanted want) {
        Copy have = copies[v];
        int changed = 0;
        changed += sync(ipcache, IpcacheMap.NAME, have.ipcache, want.ipcache(), k -> new IpcacheMap.Key(v, k).encode(), IpcacheMap::value);
        changed += sync(policy, PolicyMap.NAME, have.policy, want.policy(), e -> e.key(v).encode(), PolicyMap::value);
        changed += sync(endpoints, EndpointMap.NAME, have.endpoints, want.endpoints(), k -> new EndpointMap.Key(k, v).encode(),
                EndpointMap.Value::encode);
        return changed;
    }

    /**
     * Writes what {@code want} adds or changes, then deletes what it drops, in one batched call each;
     * {@code have} follows what landed. Returns the entries written or deleted.
     */
    private <K, V> int sync(BpfMap map, String name, Map<K, V> have, Map<K, V> want, Function<K, byte[]> key, Function<V, byte[]> value) {
        List<K> put = new ArrayList<>();
        want.forEach((k, v) -> {
            if (!v.equals(have.get(k))) {
                put.add(k);
            }
        });
        List<K> gone = have.keySet().stream().filter(k -> !want.containsKey(k)).toList();
        if (put.isEmpty() && gone.isEmpty()) {
            return 0;
        }
        long start = System.nanoTime();
        try {
            if (!put.isEmpty()) {
                map.updateBatch(put.stream().map(key).toList(), put.stream().map(k -> value.apply(want.get(k))).toList());
                put.forEach(k -> have.put(k, want.get(k)));
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
            c.ipcache.clear();
            c.policy.clear();
        }
        byte[] s = state.lookup(StateMap.key());
        active = s == null ? 0 : StateMap.version(s) & 1;
        for (byte[][] kv : endpoints.entries()) {
            EndpointMap.Key k = EndpointMap.Key.decode(kv[0]);
            copies[k.version() & 1].endpoints.put(k.ifindex(), EndpointMap.Value.decode(kv[1]));
        }
        for (byte[][] kv : ipcache.entries()) {
            IpcacheMap.Key k = IpcacheMap.Key.decode(kv[0]);
            copies[k.version() & 1].ipcache.put(k.prefix(), IpcacheMap.identity(kv[1]));
        }
        for (byte[][] kv : policy.entries()) {
            PolicyMap.Key k = PolicyMap.Key.decode(kv[0]);
            copies[k.version() & 1].policy.put(PolicyEntry.of(k), PolicyMap.rules(kv[1]));
        }
        readBack = true;
    }

    private Map<List<String>, long[]> dropCounts() {
        Map<Integer, PodKey> byEndpoint = podByEndpoint;
        Map<List<String>, long[]> out = new HashMap<>();
        List<byte[][]> entries;
        try {
            entries = drops.entries();
        } catch (BpfException closed) {
            return out; // the backend was closed or uninstalled: nothing to count any more
        }
        for (byte[][] kv : entries) {
            DropMap.Key k = DropMap.Key.decode(kv[0]);
            PodKey pod = byEndpoint.get(k.endpoint());
            if (pod != null) {
                DropMap.Value v = DropMap.Value.sumPerCpu(kv[1]);
                out.put(List.of(pod.toString(), k.direction() == 0 ? "ingress" : "egress"), new long[] {v.packets(), v.bytes()});
            }
        }
        return out;
    }

    private void updateGauges() {
        gauge(PolicyMap.NAME, copies[0].policy.size() + copies[1].policy.size(), policy.maxEntries());
        gauge(IpcacheMap.NAME, copies[0].ipcache.size() + copies[1].ipcache.size(), ipcache.maxEntries());
        gauge(EndpointMap.NAME, copies[0].endpoints.size() + copies[1].endpoints.size(), endpoints.maxEntries());
    }

    private void gauge(String map, long entries, int max) {
        metrics.bpfMapEntries.labelValues(map).set(entries);
        metrics.bpfMapPressure.labelValues(map).set((double) entries / max);
    }
}
