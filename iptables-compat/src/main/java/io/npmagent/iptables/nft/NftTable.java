package io.npmagent.iptables.nft;

import io.npmagent.dataplane.backend.DeltaTracker;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * The agent's table as the kernel holds it (as last read back, plus every transaction committed since)
 * and the transaction that makes it hold what is wanted.
 *
 * <p><b>What is known.</b> Per chain, its hook (base chains) and its rules' hashes in order; per set or
 * verdict map, its type and elements in {@link NftElements}' spelling. Handles only of objects read
 * back, for deleting an object whose name is not one the agent makes.
 *
 * <p><b>Planning.</b> {@link #plan} compares exactly the objects a {@link Wanted} names, or with
 * {@link Wanted#full} every object of the table (what is not wanted is an orphan of an earlier run and
 * goes). A chain whose hashes differ is flushed and rewritten whole; a set's elements are added and
 * deleted one by one; a set of the wrong type, or holding elements the agent cannot have written, is
 * replaced, and then every chain is rewritten in the same transaction so that nothing references the
 * old one when it goes. The plan is one {@link NftScript}; {@link #committed} records it once nft has
 * taken it. A refused transaction changed nothing, so nothing here needs undoing.
 *
 * <p>Not thread-safe: the backend's flush thread owns it.
 */
public final class NftTable {
    /** The flow sets' names, as read back or written: their elements are the kernel's, never compared. */
    private final Set<String> flowSets = new TreeSet<>();
    private boolean present;
    private final DeltaTracker<String, ChainBody> chains = new DeltaTracker<>();
    private final Map<String, HeldSet> sets = new HashMap<>();
    /** Handles of the chains and sets read back, for deleting one whose name the agent does not make. */
    private final Map<String, Long> chainHandles = new HashMap<>();
    private final Map<String, Long> setHandles = new HashMap<>();

    /** What is compared of a chain: its hook ({@code null} for a regular chain) and its rules' hashes. */
    record ChainBody(String hook, List<String> hashes) {}

    /** A set or map the kernel holds: {@link NftSetSpec#signature()}, its elements, and whether all were readable. */
    record HeldSet(String signature, DeltaTracker<String, Boolean> elements, boolean readable) {
        boolean map() {
            return signature.startsWith("map ");
        }

        List<Object> compared() {
            return List.of(signature, elements.view().keySet(), readable);
        }
    }

    /** A chain: {@code hook} is a base chain's declaration, null for a regular chain; -1: handle unknown. */
    public record ChainState(String hook, List<String> hashes, long handle) {
        public ChainState {
            hashes = List.copyOf(hashes);
        }
    }

    /**
     * A set or verdict map: {@link NftSetSpec#signature()}, elements (map elements with their verdict),
     * and whether every element read back was one the agent could have written.
     */
    public record SetState(String signature, Set<String> elements, boolean readable, long handle) {
        List<Object> compared() {
            return List.of(signature, elements, readable);
        }
    }

    /** The declaration of a base chain, as written and as rebuilt from read-back for comparison. */
    static String hookSpec(String type, String hook, String priority, String policy) {
        return "{ type " + type + " hook " + hook + " priority " + priority + "; policy " + policy + "; }";
    }

    /** What the backend wants of the objects it names this time. */
    public static final class Wanted {
        final boolean full;
        final Map<String, WantedChain> chains = new TreeMap<>();
        final Set<String> dropChains = new TreeSet<>();
        final Map<String, WantedSet> sets = new TreeMap<>();
        final Map<String, ElementCheck> elements = new TreeMap<>();
        final Set<String> dropSets = new TreeSet<>();

        /** @param full compare the whole table: objects not wanted go */
        public Wanted(boolean full) {
            this.full = full;
        }

        public void chain(String name, String hook, List<NftRules.Line> lines) {
            chains.put(name, new WantedChain(hook, List.copyOf(lines)));
        }

        public void dropChain(String name) {
            dropChains.add(name);
        }

        /** A set or map with exactly these elements. */
        public void set(String name, NftSetSpec spec, Set<String> elements) {
            sets.put(name, new WantedSet(spec, Set.copyOf(elements)));
        }

        /** Of {@code consider} (elements that may have changed), the set should hold exactly {@code want}. */
        public void elements(String name, Set<String> consider, Set<String> want) {
            ElementCheck check = elements.computeIfAbsent(name, k -> new ElementCheck(new TreeSet<>(), new HashSet<>()));
            check.consider().addAll(consider);
            check.want().addAll(want);
        }

        public void dropSet(String name) {
            dropSets.add(name);
        }
    }

    record WantedChain(String hook, List<NftRules.Line> lines) {
        ChainBody body() {
            return new ChainBody(hook, lines.stream().map(NftRules.Line::hash).toList());
        }
    }

    record WantedSet(NftSetSpec spec, Set<String> elements) {}

    record ElementCheck(Set<String> consider, Set<String> want) {}

    private static final DeltaTracker.Delta<String, ChainBody> NO_CHAINS = new DeltaTracker.Delta<>(Map.of(), Set.of());

    /** A transaction and what it does to what is known. */
    public record Plan(String script, int changes, boolean needsFullSync, DeltaTracker.Delta<String, ChainBody> chains,
            Map<String, HeldSet> created, Map<String, DeltaTracker.Delta<String, Boolean>> elements, Set<String> deletedSets) {

        public boolean isEmpty() {
            return changes == 0;
        }

        static Plan fullSyncNeeded() {
            return new Plan("", 0, true, NO_CHAINS, Map.of(), Map.of(), Set.of());
        }
    }

    /**
     * The transaction that brings what {@code w} names to what it wants. Without {@link Wanted#full}, a
     * set of the wrong type cannot be replaced (not every chain is at hand to rewrite); the plan then says
     * {@link Plan#needsFullSync}.
     */
    public Plan plan(Wanted w) {
        Set<String> replaceSets = new TreeSet<>();
        w.sets.forEach((name, want) -> {
            HeldSet have = sets.get(name);
            if (have != null && (!have.readable() || !have.signature().equals(want.spec().signature()))) {
                replaceSets.add(name);
            }
        });
        for (String name : w.elements.keySet()) {
            HeldSet have = sets.get(name);
            if (have == null || !have.readable()) {
                return Plan.fullSyncNeeded(); // the caller sends whole sets for sets it does not know
            }
        }
        if (!replaceSets.isEmpty() && !w.full) {
            return Plan.fullSyncNeeded();
        }
        NftScript script = new NftScript();
        int changes = 0;

        Set<String> chainKeys = new TreeSet<>(w.chains.keySet());
        chainKeys.addAll(w.dropChains);
        if (w.full) {
            chainKeys.addAll(chains.view().keySet()); // what is not wanted goes
        }
        DeltaTracker.Delta<String, ChainBody> chainDelta = chains.delta(chainKeys,
                name -> w.chains.containsKey(name) ? w.chains.get(name).body() : null);
        if (!replaceSets.isEmpty()) {
            // Every chain is rewritten, so that none references a replaced set when it goes.
            Map<String, ChainBody> all = new LinkedHashMap<>();
            w.chains.forEach((name, want) -> all.put(name, want.body()));
            chainDelta = new DeltaTracker.Delta<>(all, chainDelta.deletions());
        }
        for (Map.Entry<String, ChainBody> e : chainDelta.updates().entrySet()) {
            String name = e.getKey();
            ChainBody have = chains.get(name);
            if (have != null && !Objects.equals(have.hook(), e.getValue().hook())) {
                // nft cannot move a chain to another hook or priority, or turn one kind into the other.
                script.replaceBaseChain(ref(name, chainHandles.getOrDefault(name, -1L)));
            }
            script.declareChain(name, e.getValue().hook());
            w.chains.get(name).lines().forEach(l -> script.addRule(name, l.text()));
            changes++;
        }
        for (String name : chainDelta.deletions()) {
            script.deleteChain(ref(name, chainHandles.getOrDefault(name, -1L)));
            changes++;
        }

        Map<String, HeldSet> created = new LinkedHashMap<>();
        Map<String, DeltaTracker.Delta<String, Boolean>> elements = new TreeMap<>();
        Set<String> deletedSets = new TreeSet<>();
        for (Map.Entry<String, WantedSet> e : w.sets.entrySet()) {
            String name = e.getKey();
            WantedSet want = e.getValue();
            HeldSet have = sets.get(name);
            if (have == null || replaceSets.contains(name)) {
                if (have != null) {
                    script.replaceSet(ref(name, setHandles.getOrDefault(name, -1L)), have.map());
                }
                script.createSet(name, want.spec());
                script.addElements(name, new TreeSet<>(want.elements()));
                created.put(name, new HeldSet(want.spec().signature(), DeltaTracker.ofElements(want.elements()), true));
                changes++;
                continue;
            }
            Set<String> consider = new TreeSet<>(want.elements());
            consider.addAll(have.elements().view().keySet());
            changes += elementChanges(script, name, have.elements().delta(consider, present(want.elements())), elements);
        }
        for (Map.Entry<String, ElementCheck> e : w.elements.entrySet()) {
            String name = e.getKey();
            if (w.sets.containsKey(name)) {
                continue; // compared whole above
            }
            ElementCheck check = e.getValue();
            changes += elementChanges(script, name, sets.get(name).elements().delta(check.consider(), present(check.want())), elements);
        }
        Set<String> dropSets = new TreeSet<>(w.dropSets);
        if (w.full) {
            sets.keySet().stream().filter(name -> !w.sets.containsKey(name)).forEach(dropSets::add);
        }
        for (String name : dropSets) {
            HeldSet have = sets.get(name);
            if (have != null && !w.sets.containsKey(name)) {
                script.deleteSet(ref(name, setHandles.getOrDefault(name, -1L)), have.map());
                deletedSets.add(name);
                changes++;
            }
        }
        if (changes == 0) {
            return new Plan("", 0, false, NO_CHAINS, Map.of(), Map.of(), Set.of());
        }
        script.ensureTable();
        return new Plan(script.render(), changes, false, chainDelta, created, elements, deletedSets);
    }

    private static Function<String, Boolean> present(Set<String> wanted) {
        return element -> wanted.contains(element) ? DeltaTracker.PRESENT : null;
    }

    private static int elementChanges(NftScript script, String name, DeltaTracker.Delta<String, Boolean> delta,
            Map<String, DeltaTracker.Delta<String, Boolean>> elements) {
        if (!delta.deletions().isEmpty()) {
            script.deleteElements(name, delta.deletions());
        }
        if (!delta.updates().isEmpty()) {
            script.addElements(name, delta.updates().keySet());
        }
        if (!delta.isEmpty()) {
            elements.put(name, delta);
        }
        return delta.size();
    }

    private static NftScript.Ref ref(String name, long handle) {
        return new NftScript.Ref(name, handle);
    }

    /** Records that nft took {@code plan}. */
    public void committed(Plan plan) {
        present = true;
        chains.landed(plan.chains());
        plan.chains().updates().keySet().forEach(chainHandles::remove);
        plan.chains().deletions().forEach(chainHandles::remove);
        plan.created().forEach((name, s) -> {
            sets.put(name, s);
            setHandles.remove(name);
        });
        plan.elements().forEach((name, delta) -> sets.get(name).elements().landed(delta));
        plan.deletedSets().forEach(name -> {
            sets.remove(name);
            setHandles.remove(name);
        });
    }

    /** Replaces what is known with a listing of the table ({@code nft -j list table inet npm_agent}). */
    public void load(String json) {
        load(NftListing.parse(json));
    }

    void load(NftListing.Contents contents) {
        clear();
        present = true;
        Map<String, ChainBody> read = new HashMap<>();
        contents.chains().forEach((name, c) -> {
            read.put(name, new ChainBody(c.hook(), c.hashes()));
            chainHandles.put(name, c.handle());
        });
        chains.replace(read);
        flowSets.addAll(contents.flowSets());
        contents.sets().forEach((name, s) -> {
            sets.put(name, new HeldSet(s.signature(), DeltaTracker.ofElements(s.elements()), s.readable()));
            setHandles.put(name, s.handle());
        });
    }

    /** Whether the four flow sets exist (as read back, or since {@link #flowSetsWritten}). */
    public boolean hasFlowSets() {
        return flowSets.size() == 4;
    }

    /** The flow sets were written. */
    public void flowSetsWritten(Set<String> names) {
        present = true;
        flowSets.addAll(names);
    }

    /** The table does not exist (read back, or deleted). */
    public void clear() {
        present = false;
        flowSets.clear();
        chains.clear();
        chainHandles.clear();
        sets.clear();
        setHandles.clear();
    }

    public boolean present() {
        return present;
    }

    public boolean hasSet(String name) {
        return sets.containsKey(name);
    }

    /** Whether {@code other} knows the same objects (handles aside): did the kernel drift from this? */
    public boolean sameAs(NftTable other) {
        return present == other.present && chains.view().equals(other.chains.view())
                && compared(sets).equals(compared(other.sets));
    }

    /**
     * Whether a listing of chains without their rules ({@code nft -j list chains}) shows the chains known
     * here, each with the same hook.
     */
    public boolean sameChainsAs(NftListing.Contents listed) {
        Map<String, String> hooks = new HashMap<>();
        chains.view().forEach((name, c) -> hooks.put(name, String.valueOf(c.hook())));
        Map<String, String> listedHooks = new HashMap<>();
        listed.chains().forEach((name, c) -> listedHooks.put(name, String.valueOf(c.hook())));
        return hooks.equals(listedHooks);
    }

    /** Whether a listing of one set or map shows it as known here (absent from both is the same). */
    public boolean sameSetAs(String name, NftListing.Contents listed) {
        HeldSet have = sets.get(name);
        SetState seen = listed.sets().get(name);
        return have == null || seen == null ? have == null && seen == null : have.compared().equals(seen.compared());
    }

    private static Map<String, List<Object>> compared(Map<String, HeldSet> sets) {
        Map<String, List<Object>> out = new HashMap<>();
        sets.forEach((k, v) -> out.put(k, v.compared()));
        return out;
    }

    /** Rules in the table's chains. */
    public long rules() {
        return chains.view().values().stream().mapToLong(c -> c.hashes().size()).sum();
    }

    /** Sets (verdict maps are dispatch, not peer sets, and are not counted). */
    public int setCount() {
        return (int) sets.values().stream().filter(s -> !s.map()).count();
    }

    /** Elements of the sets counted by {@link #setCount}. */
    public long elements() {
        return sets.values().stream().filter(s -> !s.map()).mapToLong(s -> s.elements().size()).sum();
    }

    /** Names of the chains known, sorted (for tests and debug). */
    public List<String> chainNames() {
        return new ArrayList<>(new TreeSet<>(chains.view().keySet()));
    }

    /** Names of the sets and maps known, sorted (for tests and debug). */
    public List<String> setNames() {
        return new ArrayList<>(new TreeSet<>(sets.keySet()));
    }
}
