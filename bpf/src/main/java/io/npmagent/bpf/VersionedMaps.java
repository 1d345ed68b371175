package io.npmagent.bpf;

import io.npmagent.bpf.libbpf.MapIo;
import io.npmagent.bpf.maps.EndpointMap;
import io.npmagent.bpf.maps.IpcacheMap;
import io.npmagent.bpf.maps.LocalAddressMap;
import io.npmagent.bpf.maps.PolicyMap;
import io.npmagent.bpf.maps.StateMap;
import io.npmagent.bpf.model.PolicyEntry;
import io.npmagent.dataplane.backend.DeltaTracker;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.IpAddress;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * The double-buffered maps packets are judged from, and their writer. {@code npm_endpoints},
 * {@code npm_local}, {@code npm_ipcache} and {@code npm_policy} hold two copies each (a version bit in
 * every key); {@code npm_state} says which copy packets read.
 *
 * <p><b>{@link #commit}</b>: what is wanted is set key by key first; then, if the copy packets read
 * differs from it, the other copy is brought to it (the difference since that copy was last written:
 * one batched write per map) and {@code npm_state} flips. A refused write makes both copies unknown:
 * the next call reads them back before writing. What that makes of a batch: "A batch's atomicity" in
 * {@link BpfBackend}.
 *
 * <p>What the kernel holds is kept per copy, read back at start and after a refusal; per copy a journal
 * names the keys that may differ from what is wanted since the copy was last written, so a commit
 * compares and writes only those, not the whole state.
 */
final class VersionedMaps {
    private final MapIo state;
    private final MapIo endpoints;
    private final MapIo local;
    private final MapIo ipcache;
    private final MapIo policy;
    private final Metrics metrics;

    private final Copy[] copies = {new Copy(), new Copy()};
    private int active;
    private boolean readBack;

    // What every map should hold, in no copy in particular.
    private final Map<Integer, EndpointMap.Value> wantEndpoints = new HashMap<>();
    /** Placed local pods' addresses to their interfaces (the forward hook's way to a pod on a bridge). */
    private final Map<IpAddress, Integer> wantLocal = new HashMap<>();
    private final Map<Cidr, IpcacheMap.Value> wantIpcache = new HashMap<>();
    /** Each policy entry wanted, with its verdict. */
    private Map<PolicyEntry, Integer> wantPolicy = Map.of();

    /**
     * One copy of the maps, without the version bit: what it holds, and which keys may differ from what
     * is wanted since it was last written (its journal).
     */
    private static final class Copy {
        final DeltaTracker<Integer, EndpointMap.Value> endpoints = new DeltaTracker<>();
        final DeltaTracker<IpAddress, Integer> local = new DeltaTracker<>();
        final DeltaTracker<Cidr, IpcacheMap.Value> ipcache = new DeltaTracker<>();
        /** Entry to its value: its verdict ({@code PolicyMap.ALLOW} or {@code DENY}). */
        final DeltaTracker<PolicyEntry, Integer> policy = new DeltaTracker<>();

        List<DeltaTracker<?, ?>> all() {
            return List.of(endpoints, local, ipcache, policy);
        }
    }

    VersionedMaps(MapIo state, MapIo endpoints, MapIo local, MapIo ipcache, MapIo policy, Metrics metrics) {
        this.state = state;
        this.endpoints = endpoints;
        this.local = local;
        this.ipcache = ipcache;
        this.policy = policy;
        this.metrics = metrics;
    }

    // ---- what is wanted ----------------------------------------------------------------------------

    void putEndpoint(int ifindex, EndpointMap.Value value) {
        wantEndpoints.put(ifindex, value);
        journal(c -> c.endpoints, ifindex);
    }

    void removeEndpoint(int ifindex) {
        wantEndpoints.remove(ifindex);
        journal(c -> c.endpoints, ifindex);
    }

    EndpointMap.Value endpoint(int ifindex) {
        return wantEndpoints.get(ifindex);
    }

    void putLocal(IpAddress address, int ifindex) {
        wantLocal.put(address, ifindex);
        journal(c -> c.local, address);
    }

    /** Removes {@code address} if it still leads to {@code ifindex} (another pod may have taken it since). */
    void removeLocal(IpAddress address, int ifindex) {
        wantLocal.remove(address, ifindex);
        journal(c -> c.local, address);
    }

    void putIpcache(Cidr prefix, IpcacheMap.Value peer) {
        wantIpcache.put(prefix, peer);
        journal(c -> c.ipcache, prefix);
    }

    void removeIpcache(Cidr prefix) {
        wantIpcache.remove(prefix);
        journal(c -> c.ipcache, prefix);
    }

    /** The whole ipcache: every key of every copy is compared at the next commit. */
    void setIpcache(Map<Cidr, IpcacheMap.Value> prefixes) {
        wantIpcache.clear();
        wantIpcache.putAll(prefixes);
        everything();
    }

    /** Every policy entry wanted, with its verdict; {@code changed} names those that came, went or changed verdict since the last call. */
    void setPolicy(Map<PolicyEntry, Integer> entries, Set<PolicyEntry> changed) {
        wantPolicy = entries;
        for (Copy c : copies) {
            c.policy.mayDiffer(changed);
        }
    }

    /** Compare every key of both copies at the next commit. */
    void everything() {
        for (Copy c : copies) {
            c.all().forEach(DeltaTracker::everythingMayDiffer);
        }
    }

    private <K> void journal(Function<Copy, DeltaTracker<K, ?>> map, K key) {
        for (Copy c : copies) {
            map.apply(c).mayDiffer(key);
        }
    }

    // ---- the kernel --------------------------------------------------------------------------------

    /**
     * Brings the copy packets do not read to what is wanted and flips to it, if the copy they read
     * differs; reads both copies back first when a refusal made them unknown. Returns the entries
     * written. A map that refuses throws, and the copy packets read is then as it was; what the refused
     * write left in the other copy is read back at the next call.
     */
    int commit() {
        return refusable(() -> {
            if (!differs(active)) {
                copies[active].all().forEach(DeltaTracker::caughtUp); // it holds what is wanted already
                return 0;
            }
            // What changed since the other copy was last written (this batch and the one before), then the flip.
            int next = 1 - active;
            int written = write(next);
            state.update(StateMap.key(), StateMap.value(next));
            active = next;
            return written;
        });
    }

    /** Idle time: the copy packets do not read catches up, so the next commit writes only its own change. */
    int catchUp() {
        return refusable(() -> write(1 - active));
    }

    /** Runs a write after a read-back if the kernel's contents are unknown; a refusal makes them unknown (a batch may land in part). */
    private int refusable(java.util.function.IntSupplier write) {
        if (!readBack) {
            readBack();
        }
        try {
            return write.getAsInt();
        } catch (RuntimeException e) {
            readBack = false;
            throw e;
        }
    }

    /** Reads both copies of every map, and which copy packets read, from the kernel. */
    void readBack() {
        List<Map<Integer, EndpointMap.Value>> endpointsRead = List.of(new HashMap<>(), new HashMap<>());
        List<Map<IpAddress, Integer>> localRead = List.of(new HashMap<>(), new HashMap<>());
        List<Map<Cidr, IpcacheMap.Value>> ipcacheRead = List.of(new HashMap<>(), new HashMap<>());
        List<Map<PolicyEntry, Integer>> policyRead = List.of(new HashMap<>(), new HashMap<>());
        byte[] s = state.lookup(StateMap.key());
        active = s == null ? 0 : StateMap.version(s) & 1;
        for (byte[][] kv : endpoints.entries()) {
            EndpointMap.Key k = EndpointMap.Key.decode(kv[0]);
            endpointsRead.get(k.version() & 1).put(k.ifindex(), EndpointMap.Value.decode(kv[1]));
        }
        for (byte[][] kv : local.entries()) {
            LocalAddressMap.Key k = LocalAddressMap.Key.decode(kv[0]);
            localRead.get(k.version() & 1).put(k.address(), LocalAddressMap.ifindex(kv[1]));
        }
        for (byte[][] kv : ipcache.entries()) {
            IpcacheMap.Key k = IpcacheMap.Key.decode(kv[0]);
            ipcacheRead.get(k.version() & 1).put(k.prefix(), IpcacheMap.Value.decode(kv[1]));
        }
        for (byte[][] kv : policy.entries()) {
            PolicyMap.Key k = PolicyMap.Key.decode(kv[0]);
            policyRead.get(k.version() & 1).put(PolicyEntry.of(k), PolicyMap.verdict(kv[1]));
        }
        for (int v = 0; v < 2; v++) { // replacing makes every key of the copy one to compare
            copies[v].endpoints.replace(endpointsRead.get(v));
            copies[v].local.replace(localRead.get(v));
            copies[v].ipcache.replace(ipcacheRead.get(v));
            copies[v].policy.replace(policyRead.get(v));
        }
        readBack = true;
    }

    /** Brings copy {@code v} to what is wanted, looking only at the keys its journal names; returns the entries written or deleted. */
    private int write(int v) {
        Copy c = copies[v];
        int changed = 0;
        changed += sync(ipcache, c.ipcache, c.ipcache.pendingDelta(wantIpcache.keySet(), wantIpcache::get),
                k -> new IpcacheMap.Key(v, k).encode(), IpcacheMap.Value::encode);
        changed += sync(policy, c.policy, c.policy.pendingDelta(wantPolicy.keySet(), wantPolicy::get),
                e -> e.key(v).encode(), PolicyMap::value);
        changed += sync(endpoints, c.endpoints, c.endpoints.pendingDelta(wantEndpoints.keySet(), wantEndpoints::get),
                k -> new EndpointMap.Key(k, v).encode(), EndpointMap.Value::encode);
        changed += sync(local, c.local, c.local.pendingDelta(wantLocal.keySet(), wantLocal::get),
                k -> new LocalAddressMap.Key(v, k).encode(), LocalAddressMap::value);
        c.all().forEach(DeltaTracker::caughtUp);
        return changed;
    }

    /** Whether copy {@code v} holds anything other than what is wanted, among the keys its journal names. */
    private boolean differs(int v) {
        Copy c = copies[v];
        return c.ipcache.pendingDiffers(wantIpcache.keySet(), wantIpcache::get)
                || c.policy.pendingDiffers(wantPolicy.keySet(), wantPolicy::get)
                || c.endpoints.pendingDiffers(wantEndpoints.keySet(), wantEndpoints::get)
                || c.local.pendingDiffers(wantLocal.keySet(), wantLocal::get);
    }

    /**
     * Writes {@code delta}: additions and changes in one batched call, then deletions in another;
     * {@code copy} follows what landed (after a refusal the caller reads it back: a batch may have landed
     * in part). Returns the entries written or deleted.
     */
    private <K, V> int sync(MapIo map, DeltaTracker<K, V> copy, DeltaTracker.Delta<K, V> delta,
            Function<K, byte[]> key, Function<V, byte[]> value) {
        if (delta.isEmpty()) {
            return 0;
        }
        long start = System.nanoTime();
        try {
            if (!delta.updates().isEmpty()) {
                map.updateBatch(delta.updates().keySet().stream().map(key).toList(),
                        delta.updates().values().stream().map(value).toList());
                copy.updated(delta);
            }
            if (!delta.deletions().isEmpty()) {
                map.deleteBatch(delta.deletions().stream().map(key).toList());
                copy.deleted(delta);
            }
        } finally {
            metrics.bpfMapUpdateLatency.labelValues(map.name()).observe(Metrics.secondsSince(start));
        }
        return delta.size();
    }

    // ---- figures -----------------------------------------------------------------------------------

    /** Entries of the copy packets read: policy, endpoints, ipcache. */
    int activePolicyEntries() {
        return copies[active].policy.size();
    }

    int activeEndpoints() {
        return copies[active].endpoints.size();
    }

    int activeIpcacheEntries() {
        return copies[active].ipcache.size();
    }

    /** Both copies' entries per map, and how full each map is. */
    void updateGauges() {
        gauge(policy, copies[0].policy.size() + copies[1].policy.size());
        gauge(ipcache, copies[0].ipcache.size() + copies[1].ipcache.size());
        gauge(endpoints, copies[0].endpoints.size() + copies[1].endpoints.size());
        gauge(local, copies[0].local.size() + copies[1].local.size());
    }

    private void gauge(MapIo map, long entries) {
        metrics.bpfMapEntries.labelValues(map.name()).set(entries);
        metrics.bpfMapPressure.labelValues(map.name()).set((double) entries / map.maxEntries());
    }
}
