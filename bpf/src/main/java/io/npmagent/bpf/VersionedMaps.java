package io.npmagent.bpf;

import io.npmagent.bpf.libbpf.MapIo;
import io.npmagent.bpf.maps.EndpointMap;
import io.npmagent.bpf.maps.IpcacheMap;
import io.npmagent.bpf.maps.LocalAddressMap;
import io.npmagent.bpf.maps.PolicyMap;
import io.npmagent.bpf.maps.StateMap;
import io.npmagent.bpf.model.PolicyEntry;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.IpAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * The double-buffered maps packets are judged from, and their writer. {@code npm_endpoints},
 * {@code npm_local}, {@code npm_ipcache} and {@code npm_policy} hold two copies each (a version bit in
 * every key); {@code npm_state} says which copy packets read.
 *
 * <p><b>A batch's fate is decided in {@link #commit}</b>: what is wanted is set key by key first; then,
 * if the copy packets read differs from it, the other copy is brought to it (the difference since that
 * copy was last written: one batched write per map) and {@code npm_state} flips (one map write: from
 * then on every packet sees the whole new state). A write refused before the flip leaves the copy
 * packets read as it was; the caller takes the batch back, and the next call reads both copies back
 * before writing. The copy left behind catches up at the next commit, as it
 * becomes the one written, or in idle time ({@link #catchUp}).
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
    private final Journal[] journals = {new Journal(), new Journal()};
    private int active;
    private boolean readBack;

    // What every map should hold, in no copy in particular.
    private final Map<Integer, EndpointMap.Value> wantEndpoints = new HashMap<>();
    /** Placed local pods' addresses to their interfaces (the forward hook's way to a pod on a bridge). */
    private final Map<IpAddress, Integer> wantLocal = new HashMap<>();
    private final Map<Cidr, Integer> wantIpcache = new HashMap<>();
    private Set<PolicyEntry> wantPolicy = Set.of();

    /** One copy of the maps, without the version bit. */
    private static final class Copy {
        final Map<Integer, EndpointMap.Value> endpoints = new HashMap<>();
        final Map<IpAddress, Integer> local = new HashMap<>();
        final Map<Cidr, Integer> ipcache = new HashMap<>();
        /** Entry to its value (always 1: the number of rules is not kept). */
        final Map<PolicyEntry, Integer> policy = new HashMap<>();

        void clear() {
            endpoints.clear();
            local.clear();
            ipcache.clear();
            policy.clear();
        }
    }

    /** The keys of one copy that may differ from what is wanted, or {@code all} after a read-back or a full render. */
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
        journal(j -> j.endpoints, ifindex);
    }

    void removeEndpoint(int ifindex) {
        wantEndpoints.remove(ifindex);
        journal(j -> j.endpoints, ifindex);
    }

    EndpointMap.Value endpoint(int ifindex) {
        return wantEndpoints.get(ifindex);
    }

    void putLocal(IpAddress address, int ifindex) {
        wantLocal.put(address, ifindex);
        journal(j -> j.local, address);
    }

    /** Removes {@code address} if it still leads to {@code ifindex} (another pod may have taken it since). */
    void removeLocal(IpAddress address, int ifindex) {
        wantLocal.remove(address, ifindex);
        journal(j -> j.local, address);
    }

    void putIpcache(Cidr prefix, int identity) {
        wantIpcache.put(prefix, identity);
        journal(j -> j.ipcache, prefix);
    }

    void removeIpcache(Cidr prefix) {
        wantIpcache.remove(prefix);
        journal(j -> j.ipcache, prefix);
    }

    /** The whole ipcache: every key of every copy is compared at the next commit. */
    void setIpcache(Map<Cidr, Integer> prefixes) {
        wantIpcache.clear();
        wantIpcache.putAll(prefixes);
        everything();
    }

    /** Every policy entry wanted; {@code changed} names those that came or went since the last call. */
    void setPolicy(Set<PolicyEntry> entries, Set<PolicyEntry> changed) {
        wantPolicy = entries;
        for (Journal j : journals) {
            if (!j.all) {
                j.policy.addAll(changed);
            }
        }
    }

    /** Compare every key of both copies at the next commit. */
    void everything() {
        for (Journal j : journals) {
            j.everything();
        }
    }

    private <K> void journal(Function<Journal, Set<K>> keys, K key) {
        for (Journal j : journals) {
            if (!j.all) {
                keys.apply(j).add(key);
            }
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
                journals[active].clear(); // it holds what is wanted already
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
        for (Copy c : copies) {
            c.clear();
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
        everything();
        readBack = true;
    }

    /** Brings copy {@code v} to what is wanted, looking only at the keys its journal names; returns the entries written or deleted. */
    private int write(int v) {
        Copy have = copies[v];
        Journal j = journals[v];
        int changed = 0;
        changed += sync(ipcache, have.ipcache, keys(j.all, have.ipcache.keySet(), wantIpcache.keySet(), j.ipcache),
                wantIpcache::get, k -> new IpcacheMap.Key(v, k).encode(), IpcacheMap::value);
        changed += sync(policy, have.policy, keys(j.all, have.policy.keySet(), wantPolicy, j.policy),
                this::wantedRules, e -> e.key(v).encode(), PolicyMap::value);
        changed += sync(endpoints, have.endpoints, keys(j.all, have.endpoints.keySet(), wantEndpoints.keySet(), j.endpoints),
                wantEndpoints::get, k -> new EndpointMap.Key(k, v).encode(), EndpointMap.Value::encode);
        changed += sync(local, have.local, keys(j.all, have.local.keySet(), wantLocal.keySet(), j.local),
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
            if (!Objects.equals(want.apply(k), have.get(k))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Writes what is wanted for {@code keys} where it differs from {@code have}: additions and changes
     * in one batched call, then deletions in another; {@code have} follows what landed (after a refusal
     * the caller reads it back: a batch may have landed in part). Returns the entries written or deleted.
     */
    private <K, V> int sync(MapIo map, Map<K, V> have, Collection<K> keys, Function<K, V> want,
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
            metrics.bpfMapUpdateLatency.labelValues(map.name()).observe(Metrics.secondsSince(start));
        }
        return put.size() + gone.size();
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
