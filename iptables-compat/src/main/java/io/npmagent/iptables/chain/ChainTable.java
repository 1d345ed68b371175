package io.npmagent.iptables.chain;

import io.npmagent.dataplane.backend.DeltaTracker;
import io.npmagent.iptables.model.Names;
import io.npmagent.iptables.render.IptablesRules;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The agent's chains in one family's filter table: what the kernel holds (as a list of rule hashes per
 * chain, read from the {@code npm:<hash>} comment of each rule) and the {@code iptables-restore
 * --noflush} input that makes it hold what is wanted.
 *
 * <p>A chain whose hashes differ is rewritten whole (declaring a chain in a restore flushes it), all in
 * one restore, which the kernel commits at once: no packet ever sees half a chain. Chains that go are
 * flushed, then deleted, after every chain that jumped to them has been rewritten. A rule's hash covers
 * its chain, position and body, so reading back needs only the comments, and iptables' own respelling
 * of a rule never looks like drift. The jumps from {@code FORWARD} and {@code INPUT}
 * ({@link IptablesRules.Hook}) are each kept first in their chain, alone.
 */
public final class ChainTable {
    private static final Pattern HASH = Pattern.compile("npm:([a-z2-7]{16})");

    /** The agent's chains in the kernel, each as its rules' hashes in order. */
    private final DeltaTracker<String, List<String>> actual = new DeltaTracker<>();
    /** Per hook, its built-in chain's rules (as printed after {@code -A FORWARD } or {@code -A INPUT }) that jump to the agent. */
    private final Map<IptablesRules.Hook, List<String>> hookJumps = new EnumMap<>(IptablesRules.Hook.class);
    /** The hooks whose built-in chain has one of those first. */
    private final Set<IptablesRules.Hook> jumpIsFirst = EnumSet.noneOf(IptablesRules.Hook.class);

    public ChainTable() {
        for (IptablesRules.Hook h : IptablesRules.Hook.values()) {
            hookJumps.put(h, new ArrayList<>());
        }
    }

    /** A rule line as it is written: its hash and the full spec after {@code -A CHAIN }. */
    public record Line(String hash, String spec) {}

    /** What to send, and what it does to what is known. */
    public record Plan(String input, DeltaTracker.Delta<String, List<String>> chains, Set<IptablesRules.Hook> hooksFixed, int changes) {
        public boolean isEmpty() {
            return changes == 0;
        }
    }

    /** Renders a chain's rules into lines with their hash comments. */
    public static List<Line> lines(String chain, List<IptablesRules.Rule> rules) {
        List<Line> out = new ArrayList<>();
        for (int i = 0; i < rules.size(); i++) {
            IptablesRules.Rule r = rules.get(i);
            String hash = Names.hash(chain + "|" + i + "|" + r.body(), 16);
            out.add(new Line(hash, "-m comment --comment \"npm:" + hash + " " + r.description() + "\" " + r.body()));
        }
        return out;
    }

    /**
     * The restore input that writes every chain of {@code wanted} whose hashes differ from the kernel's
     * (or that the kernel lacks), deletes every chain of {@code unwanted} the kernel has, and, if
     * {@code fixHooks}, makes each hook's jump (FORWARD's, INPUT's) the first and only one in its chain.
     */
    public Plan plan(Map<String, List<Line>> wanted, Set<String> unwanted, boolean fixHooks) {
        Set<String> keys = new TreeSet<>(wanted.keySet());
        keys.addAll(unwanted);
        DeltaTracker.Delta<String, List<String>> delta = actual.delta(keys,
                chain -> wanted.containsKey(chain) ? wanted.get(chain).stream().map(Line::hash).toList() : null);
        Set<IptablesRules.Hook> fix = EnumSet.noneOf(IptablesRules.Hook.class);
        if (fixHooks) {
            hookJumps.forEach((h, jumps) -> {
                if (!(jumpIsFirst.contains(h) && jumps.size() == 1)) {
                    fix.add(h);
                }
            });
        }
        int changes = delta.size() + fix.size();
        if (changes == 0) {
            return new Plan("", delta, Set.of(), 0);
        }
        Set<String> rewrite = delta.updates().keySet();
        StringBuilder in = new StringBuilder("*filter\n");
        rewrite.forEach(c -> in.append(':').append(c).append(" - [0:0]\n"));
        delta.deletions().forEach(c -> in.append(':').append(c).append(" - [0:0]\n"));
        rewrite.forEach(c -> wanted.get(c).forEach(l -> in.append("-A ").append(c).append(' ').append(l.spec()).append('\n')));
        for (IptablesRules.Hook h : fix) {
            hookJumps.get(h).forEach(j -> in.append("-D ").append(h.builtin()).append(' ').append(j).append('\n'));
            in.append("-I ").append(h.builtin()).append(" 1 ").append(h.jump()).append('\n');
        }
        delta.deletions().forEach(c -> in.append("-X ").append(c).append('\n'));
        in.append("COMMIT\n");
        return new Plan(in.toString(), delta, Set.copyOf(fix), changes);
    }

    /** The restore input that removes every trace of the agent from this table. */
    public String uninstallInput() {
        if (actual.size() == 0 && hookJumps.values().stream().allMatch(List::isEmpty)) {
            return "";
        }
        StringBuilder in = new StringBuilder("*filter\n");
        hookJumps.forEach((h, jumps) -> jumps.forEach(j -> in.append("-D ").append(h.builtin()).append(' ').append(j).append('\n')));
        chains().forEach(c -> in.append(':').append(c).append(" - [0:0]\n"));
        chains().forEach(c -> in.append("-X ").append(c).append('\n'));
        in.append("COMMIT\n");
        return in.toString();
    }

    /** Records that {@code plan} is in the kernel. */
    public void committed(Plan plan) {
        actual.landed(plan.chains());
        for (IptablesRules.Hook h : plan.hooksFixed()) {
            hookJumps.get(h).clear();
            hookJumps.get(h).add(h.jump());
            jumpIsFirst.add(h);
        }
    }

    /** Replaces what is known with {@code iptables-save -t filter} output; only the agent's objects are kept. */
    public void load(String save) {
        Map<String, List<String>> read = new HashMap<>();
        hookJumps.values().forEach(List::clear);
        jumpIsFirst.clear();
        Set<IptablesRules.Hook> seen = EnumSet.noneOf(IptablesRules.Hook.class);
        for (String line : save.split("\n")) {
            IptablesRules.Hook hook = builtinRuleOf(line);
            if (line.startsWith(":" + Names.CHAIN_PREFIX)) {
                read.put(line.substring(1).split("\\s+")[0], new ArrayList<>());
            } else if (hook != null) {
                String spec = line.substring(("-A " + hook.builtin() + " ").length());
                if (spec.endsWith("-j " + hook.chain())) {
                    hookJumps.get(hook).add(spec);
                    if (!seen.contains(hook)) {
                        jumpIsFirst.add(hook);
                    }
                }
                seen.add(hook);
            } else if (line.startsWith("-A " + Names.CHAIN_PREFIX)) {
                String chain = line.substring(3).split("\\s+")[0];
                Matcher m = HASH.matcher(line);
                // A rule without our hash (added by hand) counts as a rule that should not be there.
                read.computeIfAbsent(chain, k -> new ArrayList<>()).add(m.find() ? m.group(1) : "foreign");
            }
        }
        actual.replace(read);
    }

    /** The hook whose built-in chain {@code line} adds a rule to ({@code -A FORWARD ...}), or null. */
    private static IptablesRules.Hook builtinRuleOf(String line) {
        for (IptablesRules.Hook h : IptablesRules.Hook.values()) {
            if (line.startsWith("-A " + h.builtin() + " ")) {
                return h;
            }
        }
        return null;
    }

    /**
     * Whether {@code listed} (a table loaded from {@code iptables -S} of some chains, FORWARD and INPUT
     * among them) holds the same hook jumps and the same rules in {@code chains} as this one.
     */
    public boolean sameAs(ChainTable listed, Set<String> chains) {
        if (!hookJumps.equals(listed.hookJumps) || !jumpIsFirst.equals(listed.jumpIsFirst)) {
            return false;
        }
        for (String c : chains) {
            if (!Objects.equals(actual.get(c), listed.actual.get(c))) {
                return false;
            }
        }
        return true;
    }

    /** Names of the agent's chains in the kernel. */
    public Set<String> chains() {
        return new TreeSet<>(actual.view().keySet());
    }

    public long rules() {
        return actual.view().values().stream().mapToLong(List::size).sum()
                + hookJumps.values().stream().mapToLong(List::size).sum();
    }
}
