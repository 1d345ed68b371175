package io.npmagent.iptables.nft;

import io.npmagent.iptables.NetfilterBackend;
import io.npmagent.dataplane.backend.BackendException;
import io.npmagent.dataplane.backend.BackendStatus;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.CommandRunner;
import io.npmagent.iptables.flow.CountedFlow;
import io.npmagent.iptables.flow.FlowMarks;
import io.npmagent.iptables.model.ChainId;
import io.npmagent.iptables.model.Family;
import io.npmagent.iptables.model.Member;
import io.npmagent.iptables.model.NetfilterModel;
import io.npmagent.iptables.model.SetId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The native nftables backend: one table of the agent's own, {@code table inet npm_agent}, written with
 * one {@code nft -f -} transaction per batch. Nothing outside that table is ever read or touched.
 *
 * <p><b>Layout.</b>
 * <pre>
 * table inet npm_agent
 *   chain egress   type filter hook forward priority 1; policy accept
 *       ct state established,related accept
 *       ip saddr vmap @egress4          (local judged pod address : jump pod_eg4_...)
 *       ip6 saddr vmap @egress6
 *   chain ingress  type filter hook forward priority 2; policy accept
 *       ct state established,related accept
 *       ip daddr vmap @ingress4         (local judged pod address : jump pod_in4_...)
 *       ip6 daddr vmap @ingress6
 *   chain to_node  type filter hook input priority 1; policy accept
 *       ct state established,related accept
 *       ct state new,untracked fib daddr type local ip saddr vmap @egress4     (a pod to its own node:
 *       ct state new,untracked fib daddr type local ip6 saddr vmap @egress6     judged as its egress)
 *   chain pod_in4_HASH   (one per judged pod, direction and family)
 *       jump pol_in4_HASH               (each of the pod's policies the model holds, in order)
 *       drop                            (egress: fib daddr type != local drop, NetworkPolicy admits the node)
 *   chain pod_in4_HASH   (the same, for a pod that ClusterNetworkPolicies select: see NftRules)
 *       meta mark set meta mark &amp; 0xfffbffff                  (the pass bit clear)
 *       jump cnp_in4_HASH                                   (its Admin tier, in order;
 *       meta mark &amp; 0x00040000 == 0 jump cnp_in4_HASH      each after the first unless a Pass matched)
 *       meta mark set meta mark &amp; 0xfffbffff
 *       jump pol_in4_HASH ... drop       (if NetworkPolicy isolates it; else:)
 *       jump cnp_in4_HASH                (its Baseline tier, in order, each followed by)
 *       meta mark &amp; 0x00040000 == 0x00040000 meta mark set meta mark &amp; 0xfffbffff accept
 *   chain cnp_in4_HASH   (one per ClusterNetworkPolicy, direction and family, while a pod chain jumps to it)
 *       ip saddr @s4_HASH tcp dport 80 accept                        (Accept)
 *       ip saddr @c4_HASH drop                                        (Deny)
 *       ip saddr @s4_HASH meta mark set meta mark | 0x00040000 return (Pass)
 *   chain pol_in4_HASH   (one per policy, direction and family, while a pod chain jumps to it)
 *       ip saddr @s4_HASH tcp dport 80 accept                        (selector peers, a port)
 *       ip saddr @c4_HASH ip saddr != @x4_HASH accept                 (ipBlock with excepts)
 *       ip saddr @s4_HASH ip daddr . meta l4proto . th dport @n4_HASH accept   (named port)
 *   sets s4_ (pod addresses), c4_/x4_ (an ipBlock's prefixes / its excepts, interval sets),
 *        n4_ (address . protocol . port of pods serving a named port); and the same with 6
 * </pre>
 *
 * <p><b>Where a packet's verdict is decided.</b> A forwarded packet meets {@code egress} (priority 1),
 * then {@code ingress} (priority 2), both after the usual filter chains at priority 0. In nftables
 * {@code accept} ends only the base chain it happens in, and the packet goes on to the next base chain
 * of the hook (ours or anyone's), while {@code drop} is final. So each side is judged on its own: a
 * reply of an allowed connection is accepted by both at once; otherwise, if the source is a local pod
 * isolated for egress, its pod chain tries its policy chains in turn, and the first rule that admits
 * the packet accepts it (this side allows it); a packet no rule admits falls through to the pod
 * chain's {@code drop}. Then the destination's ingress side is judged the same way. With
 * ClusterNetworkPolicies, the pod chain tries the Admin tier first and the Baseline tier where no
 * NetworkPolicy isolates the pod ({@link NftRules}); an Admin or Baseline Accept is an {@code accept}
 * there too, and a pod with only Baseline policies that let a packet by falls back to the base chain,
 * which accepts it. A packet whose ends are not judged local pods misses both maps and falls off the
 * base chains' {@code accept} policy.
 *
 * <p><b>A pod and its own node.</b> A pod's connection to an address of its own node is delivered
 * locally and never meets the forward hook. {@code to_node} (input hook) sends a new one to the pod's
 * egress chain, so its ClusterNetworkPolicies judge it in tier order, while the NetworkPolicy part's
 * {@code drop} spares the node's own addresses: NetworkPolicy always admits the pod's own node. The
 * node's connections to its pods (kubelet's probes) leave through the output hook and are not judged;
 * their replies are established. As with the iptables backend.
 *
 * <p><b>Writing.</b> {@link #write} has {@link NftTable} compare what may have changed with what the
 * kernel holds and writes the difference as one {@code nft -f} transaction. nft refuses a transaction
 * that deletes what is no longer there, so this backend answers {@link #kernelDiffersFromBelief} (was
 * the table edited by hand?). A batch's atomicity: {@link NetfilterBackend}.
 *
 * <p><b>Restart.</b> The first call reads the table back (whatever run made it) and writes only what
 * differs from the first batch: a table that already matches is not written at all.
 * {@link #uninstall} deletes the table.
 *
 * <p><b>Rules are compared by hash.</b> Each rule carries {@code comment "npm:<hash> ..."}, the hash of
 * its chain, position and text; read-back parses only comments, never nft's respelling of a rule.
 * Elements are normalised through the dataplane's address types. Object names never reach a script:
 * chains and sets are named by hashes, comments hold only plain characters.
 *
 * <p><b>Metrics.</b> {@code nftRestoreLatency{operation}} and {@code nftRestoreFailures{operation}}
 * per {@code nft -f} (apply, reconcile, uninstall); {@code numIptablesRules} counts the rules of the
 * table, {@code numIpsets} and {@code numIpsetEntries} its sets and their elements (verdict maps
 * aside).
 */
public final class NftBackend extends NetfilterBackend {
    static final int EGRESS_PRIORITY = 1;
    static final int INGRESS_PRIORITY = 2;
    static final int TO_NODE_PRIORITY = 1;

    private final CommandRunner runner;
    private final Duration timeout;
    private NftTable table = new NftTable();
    private final NftDrops drops = new NftDrops(flowMarks);

    /** @param timeout how long any one nft process may run */
    public NftBackend(CommandRunner runner, Metrics metrics, Duration timeout) {
        super(metrics);
        this.runner = runner;
        this.timeout = timeout;
    }

    @Override
    protected CommandRunner runner() {
        return runner;
    }

    @Override
    public String name() {
        return "nft";
    }

    /**
     * After a refusal: whether the table differs from what was believed (a hand edit). nft refuses a
     * whole transaction that deletes an element or chain that is no longer there, so a stale belief can
     * be the cause; the batch is then tried again against a fresh read.
     */
    @Override
    protected boolean kernelDiffersFromBelief() {
        return !readTable().sameAs(table);
    }

    /**
     * Two small listings of what a flushed ruleset or a hand edit most often undoes: every chain of the
     * table with its hook (a deleted table or chain), and the four dispatch maps (an emptied one opens
     * its pods). At 10,000 rules that takes milliseconds where listing the table takes a second. Rules
     * and peer set elements wait for the next full comparison.
     */
    @Override
    protected boolean entryPointsAsWritten() {
        if (!table.sameChainsAs(list("chains", NftNames.FAMILY))) {
            return false;
        }
        for (Direction d : Direction.values()) {
            for (Family f : Family.values()) {
                String map = NftNames.dispatchMap(new ChainId.Dispatch(d, f));
                if (!table.sameSetAs(map, list("map", NftNames.FAMILY, NftNames.TABLE, map))) {
                    return false;
                }
            }
        }
        return true;
    }

    /** {@code nft -j list <what>}, parsed; an object that does not exist lists as {@code NOTHING}. */
    private NftListing.Contents list(String... what) {
        List<String> argv = new ArrayList<>(List.of("nft", "-j", "list"));
        argv.addAll(List.of(what));
        CommandResult r = runner.run(argv, "", timeout);
        if (!r.ok()) {
            if (r.exitCode() == 1 && r.stderr().contains("No such file or directory")) {
                return NftListing.Contents.NOTHING;
            }
            throw new BackendException("cannot list " + String.join(" ", what) + ": " + r.errorSummary(), "");
        }
        try {
            return NftListing.parse(r.stdout());
        } catch (IllegalArgumentException e) {
            throw new BackendException("cannot read " + String.join(" ", what) + ": " + e.getMessage(), "", e);
        }
    }

    @Override
    protected void removeAll() {
        // Adding first makes the delete succeed whether or not the table exists, in one transaction.
        nft("add table " + NftNames.TABLE_REF + "\ndelete table " + NftNames.TABLE_REF + "\n", "uninstall");
        table.clear();
    }

    @Override
    public synchronized BackendStatus status() {
        return new BackendStatus(name(), model.policyCount(), table.rules(), table.setCount(), table.elements());
    }

    @Override
    protected void readBack() {
        table = readTable();
    }

    @Override
    protected int write(NetfilterModel.Dirty dirty, boolean full, String operation) {
        NftTable.Wanted wanted = new NftTable.Wanted(full);
        wantSets(dirty, full, wanted);
        wantChains(dirty.chains(), wanted);
        if (full) {
            for (Direction d : Direction.values()) {
                String chain = NftNames.baseChain(d);
                wanted.chain(chain, baseHook(d), NftRules.lines(chain, NftRules.baseChain(d)));
            }
            wanted.chain(NftNames.TO_NODE, toNodeHook(), NftRules.lines(NftNames.TO_NODE, NftRules.toNodeChain()));
        }
        NftTable.Plan plan = table.plan(wanted);
        if (plan.needsFullSync()) {
            return fullSync(operation); // a set must be replaced, and with it every chain: compare everything
        }
        Set<String> flowSets = new TreeSet<>();
        String flowSetsScript = flowSetsScript(flowSets);
        if (plan.isEmpty() && flowSetsScript.isEmpty()) {
            return 0;
        }
        nft(flowSetsScript + plan.script(), operation);
        table.committed(plan);
        table.flowSetsWritten(flowSets);
        return plan.changes() + flowSets.size();
    }

    private void wantSets(NetfilterModel.Dirty dirty, boolean full, NftTable.Wanted wanted) {
        Set<SetId> touched = new HashSet<>(dirty.sets());
        touched.addAll(dirty.members().keySet());
        for (SetId set : touched) {
            String name = NftNames.set(set);
            if (!model.exists(set)) {
                release(set);
                wanted.dropSet(name);
                if (set instanceof SetId.Cidr c) {
                    wanted.dropSet(NftNames.excepts(c));
                }
                continue;
            }
            claim(set);
            boolean whole = full || dirty.sets().contains(set) || set instanceof SetId.Cidr || !table.hasSet(name);
            if (whole) {
                NftSetSpec spec = NftSetSpec.of(set);
                NftElements.of(set, model.members(set)).forEach((n, elements) -> wanted.set(n, spec, elements));
            } else {
                // Only the members the model says may have changed: a constant-time question each.
                Set<String> consider = new TreeSet<>();
                Set<String> want = new HashSet<>();
                for (Member m : dirty.members().get(set)) {
                    String text = NftElements.text(m);
                    consider.add(text);
                    if (model.holds(set, m)) {
                        want.add(text);
                    }
                }
                wanted.elements(name, consider, want);
            }
        }
    }

    private void wantChains(Set<ChainId> touched, NftTable.Wanted wanted) {
        // In name order: attribution numbers are given as chains render, so the same state renders the same script.
        List<ChainId> ordered = new ArrayList<>(touched);
        ordered.sort(java.util.Comparator.comparing(id -> id instanceof ChainId.Dispatch d ? NftNames.dispatchMap(d) : NftNames.chain(id)));
        for (ChainId id : ordered) {
            if (id instanceof ChainId.Dispatch d) {
                Set<String> elements = new HashSet<>();
                model.dispatch(d).forEach((ip, pod) -> elements.add(NftElements.dispatch(ip,
                        NftNames.chain(new ChainId.PodChain(pod, d.direction(), d.family())))));
                wanted.set(NftNames.dispatchMap(d), NftSetSpec.dispatch(d.family()), elements);
                continue;
            }
            String chain = NftNames.chain(id);
            if (model.exists(id)) {
                names.claim(chain, id);
                wanted.chain(chain, null, NftRules.lines(chain, NftRules.rules(model, id, drops)));
            } else {
                names.release(chain, id);
                wanted.dropChain(chain);
            }
        }
    }

    /**
     * The four flow sets' declarations, when the table lacks them: written at the head of the same
     * transaction as the rules that name them. Created once, never compared or rewritten (the kernel
     * fills them); whether or not flows are on, since empty sets cost nothing and turning flows on then
     * needs no new objects. Empty when they exist.
     */
    private String flowSetsScript(Set<String> names) {
        if (table.hasFlowSets()) {
            return "";
        }
        StringBuilder script = new StringBuilder("add table " + NftNames.TABLE_REF + "\n");
        for (Direction d : Direction.values()) {
            for (Family f : Family.values()) {
                String name = NftDrops.flowSet(d, f);
                names.add(name);
                script.append("add set ").append(NftNames.TABLE_REF).append(' ').append(name).append(' ')
                        .append(NftDrops.flowSetDeclaration(f)).append('\n');
            }
        }
        return script.toString();
    }

    /** {@code nft -j list set} of each flow set: its elements with their counters. */
    @Override
    protected CountedFlow.Reading readFlowCounters() {
        List<CountedFlow> flows = new ArrayList<>();
        int full = 0;
        for (Direction d : Direction.values()) {
            for (Family f : Family.values()) {
                String name = NftDrops.flowSet(d, f);
                CommandResult r = runner.run(List.of("nft", "-j", "list", "set", NftNames.FAMILY, NftNames.TABLE, name), "", timeout);
                if (!r.ok()) {
                    throw new BackendException("cannot list flow set " + name + ": " + r.errorSummary(), "");
                }
                if (NftFlowSets.parse(r.stdout(), d, flows) >= FlowMarks.MAX_FLOWS) {
                    full++;
                }
            }
        }
        return new CountedFlow.Reading(flows, full);
    }

    /** The input hook's base chain: at the egress chain's priority, after the usual filter chains at 0. */
    static String toNodeHook() {
        return NftTable.hookSpec("filter", "input", Integer.toString(TO_NODE_PRIORITY), "accept");
    }

    static String baseHook(Direction d) {
        return NftTable.hookSpec("filter", "forward",
                Integer.toString(d == Direction.EGRESS ? EGRESS_PRIORITY : INGRESS_PRIORITY), "accept");
    }

    private void claim(SetId set) {
        names.claim(NftNames.set(set), set);
        if (set instanceof SetId.Cidr c) {
            names.claim(NftNames.excepts(c), set);
        }
    }

    private void release(SetId set) {
        names.release(NftNames.set(set), set);
        if (set instanceof SetId.Cidr c) {
            names.release(NftNames.excepts(c), set);
        }
    }

    /** The table as the kernel holds it now; empty if it does not exist. */
    private NftTable readTable() {
        NftListing.Contents listed = list("table", NftNames.FAMILY, NftNames.TABLE);
        NftTable read = new NftTable();
        if (listed != NftListing.Contents.NOTHING) { // else no table yet: nothing to adopt
            read.load(listed);
        }
        return read;
    }

    private void nft(String script, String operation) {
        long start = System.nanoTime();
        CommandResult r = runner.run(List.of("nft", "-f", "-"), script, timeout);
        metrics.nftRestoreLatency.labelValues(operation).observe(Metrics.secondsSince(start));
        if (!r.ok()) {
            metrics.nftRestoreFailures.labelValues(operation).inc();
            throw new BackendException(r.errorSummary(), script);
        }
    }
}
