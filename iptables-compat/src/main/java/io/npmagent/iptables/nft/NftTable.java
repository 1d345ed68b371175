package io.npmagent.iptables.nft;

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
    private boolean present;
    private final Map<String, ChainState> chains = new HashMap<>();
    private final Map<String, SetState> sets = new HashMap<>();

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
        boolean map() {
            return signature.startsWith("map ");
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
        List<String> hashes() {
            return lines.stream().map(NftRules.Line::hash).toList();
        }
    }

    record WantedSet(NftSetSpec spec, Set<String> elements) {}

    record ElementCheck(Set<String> consider, Set<String> want) {}

    /** A transaction and what it does to what is known. */
    public record Plan(String script, int changes, boolean needsFullSync, Map<String, ChainState> written,
            Set<String> deletedChains, Map<String, SetState> created, Map<String, Set<String>> added,
            Map<String, Set<String>> deleted, Set<String> deletedSets) {

        public boolean isEmpty() {
            return changes == 0;
        }

        static Plan fullSyncNeeded() {
            return new Plan("", 0, true, Map.of(), Set.of(), Map.of(), Map.of(), Map.of(), Set.of());
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
            SetState have = sets.get(name);
            if (have != null && (!have.readable() || !have.signature().equals(want.spec().signature()))) {
                replaceSets.add(name);
            }
        });
        for (String name : w.elements.keySet()) {
            SetState have = sets.get(name);
            if (have == null || !have.readable()) {
                return Plan.fullSyncNeeded(); // the caller sends whole sets for sets it does not know
            }
        }
        if (!replaceSets.isEmpty() && !w.full) {
            return Plan.fullSyncNeeded();
        }
        NftScript script = new NftScript();
        int changes = 0;
        Map<String, ChainState> written = new LinkedHashMap<>();
        Set<String> deletedChains = new TreeSet<>();
        Map<String, SetState> created = new LinkedHashMap<>();
        Map<String, Set<String>> added = new TreeMap<>();
        Map<String, Set<String>> deleted = new TreeMap<>();
        Set<String> deletedSets = new TreeSet<>();

        boolean rewriteAll = !replaceSets.isEmpty();
        for (Map.Entry<String, WantedChain> e : w.chains.entrySet()) {
            String name = e.getKey();
            WantedChain want = e.getValue();
            ChainState have = chains.get(name);
            boolean hookWrong = have != null && !Objects.equals(have.hook(), want.hook());
            if (!rewriteAll && have != null && !hookWrong && have.hashes().equals(want.hashes())) {
                continue;
            }
            if (hookWrong) {
                // nft cannot move a chain to another hook or priority, or turn one kind into the other.
                script.replaceBaseChain(ref(name, have == null ? -1 : have.handle()));
            }
            script.declareChain(name, want.hook());
            want.lines().forEach(l -> script.addRule(name, l.text()));
            written.put(name, new ChainState(want.hook(), want.hashes(), -1));
            changes++;
        }
        Set<String> dropChains = new TreeSet<>(w.dropChains);
        if (w.full) {
            chains.keySet().stream().filter(c -> !w.chains.containsKey(c)).forEach(dropChains::add);
        }
        for (String name : dropChains) {
            ChainState have = chains.get(name);
            if (have != null && !w.chains.containsKey(name)) {
                script.deleteChain(ref(name, have.handle()));
                deletedChains.add(name);
                changes++;
            }
        }

        for (Map.Entry<String, WantedSet> e : w.sets.entrySet()) {
            String name = e.getKey();
            WantedSet want = e.getValue();
            SetState have = sets.get(name);
            if (have == null || replaceSets.contains(name)) {
                if (have != null) {
                    script.replaceSet(ref(name, have.handle()), have.map());
                }
                script.createSet(name, want.spec());
                script.addElements(name, new TreeSet<>(want.elements()));
                created.put(name, new SetState(want.spec().signature(), want.elements(), true, -1));
                changes++;
                continue;
            }
            Set<String> add = new TreeSet<>(want.elements());
            add.removeAll(have.elements());
            Set<String> del = new TreeSet<>(have.elements());
            del.removeAll(want.elements());
            changes += elementChanges(script, name, add, del, added, deleted);
        }
        for (Map.Entry<String, ElementCheck> e : w.elements.entrySet()) {
            String name = e.getKey();
            if (w.sets.containsKey(name)) {
                continue; // compared whole above
            }
            SetState have = sets.get(name);
            Set<String> add = new TreeSet<>();
            Set<String> del = new TreeSet<>();
            for (String element : e.getValue().consider()) {
                boolean want = e.getValue().want().contains(element);
                boolean has = have.elements().contains(element);
                if (want && !has) {
                    add.add(element);
                } else if (!want && has) {
                    del.add(element);
                }
            }
            changes += elementChanges(script, name, add, del, added, deleted);
        }
        Set<String> dropSets = new TreeSet<>(w.dropSets);
        if (w.full) {
            sets.keySet().stream().filter(s -> !w.sets.containsKey(s)).forEach(dropSets::add);
        }
        for (String name : dropSets) {
            SetState have = sets.get(name);
            if (have != null && !w.sets.containsKey(name)) {
                script.deleteSet(ref(name, have.handle()), have.map());
                deletedSets.add(name);
                changes++;
            }
        }
        if (changes == 0) {
            return new Plan("", 0, false, Map.of(), Set.of(), Map.of(), Map.of(), Map.of(), Set.of());
        }
        script.ensureTable();
        return new Plan(script.render(), changes, false, written, deletedChains, created, added, deleted, deletedSets);
    }

    private static int elementChanges(NftScript script, String name, Set<String> add, Set<String> del,
            Map<String, Set<String>> added, Map<String, Set<String>> deleted) {
        if (!del.isEmpty()) {
            script.deleteElements(name, del);
            deleted.put(name, del);
        }
        if (!add.isEmpty()) {
            script.addElements(name, add);
            added.put(name, add);
        }
        return add.size() + del.size();
    }

    private static NftScript.Ref ref(String name, long handle) {
        return new NftScript.Ref(name, handle);
    }

    /** Records that nft took {@code plan}. */
    public void committed(Plan plan) {
        present = true;
        chains.putAll(plan.written());
        plan.deletedChains().forEach(chains::remove);
        plan.created().forEach((name, s) ->
                sets.put(name, new SetState(s.signature(), new HashSet<>(s.elements()), true, -1)));
        plan.deleted().forEach((name, es) -> sets.get(name).elements().removeAll(es));
        plan.added().forEach((name, es) -> sets.get(name).elements().addAll(es));
        plan.deletedSets().forEach(sets::remove);
    }

    /** Replaces what is known with a listing of the table ({@code nft -j list table inet npm_agent}). */
    public void load(String json) {
        load(NftListing.parse(json));
    }

    void load(NftListing.Contents contents) {
        clear();
        present = true;
        chains.putAll(contents.chains());
        contents.sets().forEach((name, s) ->
                sets.put(name, new SetState(s.signature(), new HashSet<>(s.elements()), s.readable(), s.handle())));
    }

    /** The table does not exist (read back, or deleted). */
    public void clear() {
        present = false;
        chains.clear();
        sets.clear();
    }

    public boolean present() {
        return present;
    }

    public boolean hasSet(String name) {
        return sets.containsKey(name);
    }

    /** Whether {@code other} knows the same objects (handles aside): did the kernel drift from this? */
    public boolean sameAs(NftTable other) {
        return present == other.present && stripped(chains).equals(stripped(other.chains))
                && strippedSets(sets).equals(strippedSets(other.sets));
    }

    /**
     * Whether a listing of chains without their rules ({@code nft -j list chains}) shows the chains known
     * here, each with the same hook.
     */
    public boolean sameChainsAs(NftListing.Contents listed) {
        Map<String, String> hooks = new HashMap<>();
        chains.forEach((name, c) -> hooks.put(name, String.valueOf(c.hook())));
        Map<String, String> listedHooks = new HashMap<>();
        listed.chains().forEach((name, c) -> listedHooks.put(name, String.valueOf(c.hook())));
        return hooks.equals(listedHooks);
    }

    /** Whether a listing of one set or map shows it as known here (absent from both is the same). */
    public boolean sameSetAs(String name, NftListing.Contents listed) {
        return Objects.equals(strippedSets(filter(sets, name)), strippedSets(filter(listed.sets(), name)));
    }

    private static Map<String, SetState> filter(Map<String, SetState> sets, String name) {
        return sets.containsKey(name) ? Map.of(name, sets.get(name)) : Map.of();
    }

    private static Map<String, List<Object>> stripped(Map<String, ChainState> chains) {
        Map<String, List<Object>> out = new HashMap<>();
        chains.forEach((k, v) -> out.put(k, List.of(String.valueOf(v.hook()), v.hashes())));
        return out;
    }

    private static Map<String, List<Object>> strippedSets(Map<String, SetState> sets) {
        Map<String, List<Object>> out = new HashMap<>();
        sets.forEach((k, v) -> out.put(k, List.of(v.signature(), v.elements(), v.readable())));
        return out;
    }

    /** Rules in the table's chains. */
    public long rules() {
        return chains.values().stream().mapToLong(c -> c.hashes().size()).sum();
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
        return new ArrayList<>(new TreeSet<>(chains.keySet()));
    }

    /** Names of the sets and maps known, sorted (for tests and debug). */
    public List<String> setNames() {
        return new ArrayList<>(new TreeSet<>(sets.keySet()));
    }
}
