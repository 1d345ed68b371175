package io.npmagent.iptables.chain;

import io.npmagent.dataplane.backend.DeltaTracker;
import io.npmagent.iptables.model.Names;
import io.npmagent.iptables.render.IptablesRules;
import java.util.ArrayList;
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
 * of a rule never looks like drift. The jump from {@code FORWARD} is kept first in FORWARD, alone.
 */
public final class ChainTable {
    private static final Pattern HASH = Pattern.compile("npm:([a-z2-7]{16})");

    /** The agent's chains in the kernel, each as its rules' hashes in order. */
    private final DeltaTracker<String, List<String>> actual = new DeltaTracker<>();
    /** FORWARD rules (as printed after {@code -A FORWARD }) that jump to the agent, and whether one is first. */
    private final List<String> forwardJumps = new ArrayList<>();
    private boolean jumpIsFirst;

    /** A rule line as it is written: its hash and the full spec after {@code -A CHAIN }. */
    public record Line(String hash, String spec) {}

    /** What to send, and what it does to what is known. */
    public record Plan(String input, DeltaTracker.Delta<String, List<String>> chains, boolean forwardFixed, int changes) {
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
     * {@code fixForward}, makes the FORWARD jump the first and only one.
     */
    public Plan plan(Map<String, List<Line>> wanted, Set<String> unwanted, boolean fixForward) {
        Set<String> keys = new TreeSet<>(wanted.keySet());
        keys.addAll(unwanted);
        DeltaTracker.Delta<String, List<String>> delta = actual.delta(keys,
                chain -> wanted.containsKey(chain) ? wanted.get(chain).stream().map(Line::hash).toList() : null);
        boolean forward = fixForward && !(jumpIsFirst && forwardJumps.size() == 1);
        int changes = delta.size() + (forward ? 1 : 0);
        if (changes == 0) {
            return new Plan("", delta, false, 0);
        }
        Set<String> rewrite = delta.updates().keySet();
        StringBuilder in = new StringBuilder("*filter\n");
        rewrite.forEach(c -> in.append(':').append(c).append(" - [0:0]\n"));
        delta.deletions().forEach(c -> in.append(':').append(c).append(" - [0:0]\n"));
        rewrite.forEach(c -> wanted.get(c).forEach(l -> in.append("-A ").append(c).append(' ').append(l.spec()).append('\n')));
        if (forward) {
            forwardJumps.forEach(j -> in.append("-D FORWARD ").append(j).append('\n'));
            in.append("-I FORWARD 1 ").append(IptablesRules.forwardJump()).append('\n');
        }
        delta.deletions().forEach(c -> in.append("-X ").append(c).append('\n'));
        in.append("COMMIT\n");
        return new Plan(in.toString(), delta, forward, changes);
    }

    /** The restore input that removes every trace of the agent from this table. */
    public String uninstallInput() {
        if (actual.size() == 0 && forwardJumps.isEmpty()) {
            return "";
        }
        StringBuilder in = new StringBuilder("*filter\n");
        forwardJumps.forEach(j -> in.append("-D FORWARD ").append(j).append('\n'));
        chains().forEach(c -> in.append(':').append(c).append(" - [0:0]\n"));
        chains().forEach(c -> in.append("-X ").append(c).append('\n'));
        in.append("COMMIT\n");
        return in.toString();
    }

    /** Records that {@code plan} is in the kernel. */
    public void committed(Plan plan) {
        actual.landed(plan.chains());
        if (plan.forwardFixed()) {
            forwardJumps.clear();
            forwardJumps.add(IptablesRules.forwardJump());
            jumpIsFirst = true;
        }
    }

    /** Replaces what is known with {@code iptables-save -t filter} output; only the agent's objects are kept. */
    public void load(String save) {
        Map<String, List<String>> read = new HashMap<>();
        forwardJumps.clear();
        jumpIsFirst = false;
        boolean firstForward = true;
        for (String line : save.split("\n")) {
            if (line.startsWith(":" + Names.CHAIN_PREFIX)) {
                read.put(line.substring(1).split("\\s+")[0], new ArrayList<>());
            } else if (line.startsWith("-A FORWARD ")) {
                String spec = line.substring("-A FORWARD ".length());
                boolean ours = spec.endsWith("-j " + Names.FORWARD_CHAIN);
                if (ours) {
                    forwardJumps.add(spec);
                    jumpIsFirst |= firstForward;
                }
                firstForward = false;
            } else if (line.startsWith("-A " + Names.CHAIN_PREFIX)) {
                String chain = line.substring(3).split("\\s+")[0];
                Matcher m = HASH.matcher(line);
                // A rule without our hash (added by hand) counts as a rule that should not be there.
                read.computeIfAbsent(chain, k -> new ArrayList<>()).add(m.find() ? m.group(1) : "foreign");
            }
        }
        actual.replace(read);
    }

    /**
     * Whether {@code listed} (a table loaded from {@code iptables -S} of some chains, FORWARD among them)
     * holds the same FORWARD jump and the same rules in {@code chains} as this one.
     */
    public boolean sameAs(ChainTable listed, Set<String> chains) {
        if (!forwardJumps.equals(listed.forwardJumps) || jumpIsFirst != listed.jumpIsFirst) {
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
        return actual.view().values().stream().mapToLong(List::size).sum() + forwardJumps.size();
    }
}
