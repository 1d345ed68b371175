package io.npmagent.iptables.nft;

import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * One {@code nft -f -} transaction, built in any order and rendered in the one order the kernel
 * accepts: whatever is referenced exists before the reference, and whatever is deleted is no longer
 * referenced. The kernel checks references as the transaction goes, but commits it (or nothing) at
 * the end, so no packet sees a half-written chain.
 *
 * <ol>
 *   <li>the table ({@code add} is a no-op when it exists);</li>
 *   <li>base chains whose hook or priority is wrong are deleted (nft cannot change them in place);</li>
 *   <li>every chain to write is declared ({@code add chain}, a no-op when it exists; a base chain with
 *       its hook, which also resets its policy);</li>
 *   <li>every chain to write or delete is flushed, which drops its references to chains and sets;</li>
 *   <li>sets of the wrong type are deleted (the caller rewrites every chain when it does this, so
 *       nothing references them any more);</li>
 *   <li>sets are created;</li>
 *   <li>elements are deleted, then added: a map element whose verdict changes is deleted first;</li>
 *   <li>the written chains are filled: the sets and chains they name exist now;</li>
 *   <li>chains that go are deleted: flushed in 4, and no longer jumped to or mapped to after 7 and 8;</li>
 *   <li>sets that go are deleted: no rule names them after 4 and 8.</li>
 * </ol>
 *
 * <p>Names reach this class only from {@link NftNames} or, for objects read back that are not ours by
 * name, as kernel handles: no object text is ever written.
 */
final class NftScript {
    /** Elements per statement: short lines for logs, and no limit of nft's parser in sight. */
    static final int ELEMENTS_PER_LINE = 256;

    private enum Phase {
        TABLE, REPLACE_BASE, DECLARE, FLUSH, REPLACE_SETS, CREATE_SETS, DELETE_ELEMENTS, ADD_ELEMENTS, FILL,
        DELETE_CHAINS, DELETE_SETS
    }

    private final Map<Phase, List<String>> statements = new EnumMap<>(Phase.class);

    NftScript() {
        for (Phase p : Phase.values()) {
            statements.put(p, new ArrayList<>());
        }
    }

    /** A named object of the table, or one read back under a name the agent does not make. */
    record Ref(String name, long handle) {
        static Ref named(String name) {
            return new Ref(name, -1);
        }

        /** How a {@code delete} names it: by name if it is one of ours, else by its kernel handle. */
        String deleteTarget() {
            if (NftNames.ours(name)) {
                return name;
            }
            if (handle < 0) {
                throw new IllegalStateException("object without a handle or a name of ours");
            }
            return "handle " + handle;
        }

        boolean flushable() {
            return NftNames.ours(name);
        }
    }

    boolean isEmpty() {
        return statements.values().stream().allMatch(List::isEmpty);
    }

    void ensureTable() {
        add(Phase.TABLE, "add table " + NftNames.TABLE_REF);
    }

    void replaceBaseChain(Ref chain) {
        add(Phase.REPLACE_BASE, "flush chain " + NftNames.TABLE_REF + " " + chain.name());
        add(Phase.REPLACE_BASE, "delete chain " + NftNames.TABLE_REF + " " + chain.name());
    }

    /** Declares a chain to write, flushing whatever it held. {@code hook} is a base chain's, or null. */
    void declareChain(String name, String hook) {
        add(Phase.DECLARE, "add chain " + NftNames.TABLE_REF + " " + name + (hook == null ? "" : " " + hook));
        add(Phase.FLUSH, "flush chain " + NftNames.TABLE_REF + " " + name);
    }

    void addRule(String chain, String text) {
        add(Phase.FILL, "add rule " + NftNames.TABLE_REF + " " + chain + " " + text);
    }

    void deleteChain(Ref chain) {
        if (chain.flushable()) {
            add(Phase.FLUSH, "flush chain " + NftNames.TABLE_REF + " " + chain.name());
        }
        add(Phase.DELETE_CHAINS, "delete chain " + NftNames.TABLE_REF + " " + chain.deleteTarget());
    }

    void replaceSet(Ref set, boolean map) {
        add(Phase.REPLACE_SETS, "delete " + (map ? "map " : "set ") + NftNames.TABLE_REF + " " + set.deleteTarget());
    }

    void createSet(String name, NftSetSpec spec) {
        add(Phase.CREATE_SETS, "add " + (spec.map() ? "map " : "set ") + NftNames.TABLE_REF + " " + name + " " + spec.declaration());
    }

    void addElements(String set, Collection<String> elements) {
        chunked(Phase.ADD_ELEMENTS, "add element ", set, elements);
    }

    /** Deletes elements by key (a map element's verdict is left out). */
    void deleteElements(String set, Collection<String> elements) {
        chunked(Phase.DELETE_ELEMENTS, "delete element ", set,
                elements.stream().map(NftElements::key).toList());
    }

    void deleteSet(Ref set, boolean map) {
        add(Phase.DELETE_SETS, "delete " + (map ? "map " : "set ") + NftNames.TABLE_REF + " " + set.deleteTarget());
    }

    private void chunked(Phase phase, String verb, String set, Collection<String> elements) {
        List<String> all = new ArrayList<>(elements);
        for (int i = 0; i < all.size(); i += ELEMENTS_PER_LINE) {
            List<String> chunk = all.subList(i, Math.min(all.size(), i + ELEMENTS_PER_LINE));
            add(phase, verb + NftNames.TABLE_REF + " " + set + " { " + String.join(", ", chunk) + " }");
        }
    }

    private void add(Phase phase, String statement) {
        statements.get(phase).add(statement);
    }

    /** Exactly the text sent to {@code nft -f -}. */
    String render() {
        StringBuilder sb = new StringBuilder();
        statements.values().forEach(list -> list.forEach(s -> sb.append(s).append('\n')));
        return sb.toString();
    }

    @Override
    public String toString() {
        return render();
    }
}
