package io.npmagent.iptables;

import io.npmagent.dataplane.backend.BackendException;
import io.npmagent.dataplane.backend.BackendStatus;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.iptables.chain.ChainTable;
import io.npmagent.iptables.detect.IptablesVariant;
import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.CommandRunner;
import io.npmagent.iptables.flow.CountedFlow;
import io.npmagent.iptables.ipset.IpsetFlowSets;
import io.npmagent.iptables.ipset.IpsetTable;
import io.npmagent.iptables.model.ChainId;
import io.npmagent.iptables.model.Family;
import io.npmagent.iptables.model.Names;
import io.npmagent.iptables.model.NetfilterModel;
import io.npmagent.iptables.model.SetId;
import io.npmagent.iptables.render.IptablesDrops;
import io.npmagent.iptables.render.IptablesRules;
import java.util.ArrayList;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The fallback backend: ipsets and iptables chains, written with one {@code ipset restore} and one
 * {@code iptables-restore --noflush} per family per batch (plus an {@code ipset restore} of destroys
 * when sets go).
 *
 * <p><b>Writing.</b> {@link #write} writes the difference in order: sets and members, then the chains of
 * both families, then destroys. Each step is believed once it lands, so a refused step leaves the belief
 * true (a refused {@code ipset restore}, which applies line by line, is read back). Its inputs cannot be
 * refused for a stale belief (members carry {@code -exist}, a chain is declared before it is written or
 * deleted), so a refusal never reads the kernel back to look for drift: {@link #reconcile} and
 * {@link #quickReconcile} repair that. A batch's atomicity: {@link NetfilterBackend}.
 *
 * <p><b>Flow verdicts.</b> Drops by policy log and count per flow ({@link IptablesDrops}) into four
 * flow sets ({@link IpsetFlowSets}), created before the first chains that name them whenever a read-back
 * lacks them (whether or not flows are on: empty sets cost nothing), never compared or rewritten (the
 * kernel fills them), read by {@link #readFlowCounters} and destroyed by {@link #uninstall}.
 *
 * <p><b>Restart.</b> The first call reads back the agent's own chains and sets (whatever run made them)
 * and writes only the difference; {@link #uninstall} removes it all. Chains whose drops log are
 * rewritten once by a restarted agent when its attribution numbers differ from the last run's.
 *
 * <p><b>Processes.</b> All through {@link CommandRunner}; restores wait for the xtables lock
 * ({@code -w}), never break it, and are killed after a timeout.
 */
public final class IptablesBackend extends NetfilterBackend {
    /**
     * @param markBit  the packet-mark bit for "admitted" and "accepted" (never kube-proxy's 0x4000 or 0x8000)
     * @param passBit  the packet-mark bit for a ClusterNetworkPolicy's Pass (likewise; the nft backend uses
     *                 the default's)
     * @param lockWait how long a restore waits for the xtables lock
     * @param timeout  how long any one process may run
     */
    public record Settings(int markBit, int passBit, Duration lockWait, Duration timeout) {
        public static final Settings DEFAULTS = new Settings(0x20000, 0x40000, Duration.ofSeconds(10), Duration.ofSeconds(120));
    }

    private final IptablesVariant variant;
    private final CommandRunner runner;
    private final Settings settings;
    private final IptablesRules rules;
    private final IpsetTable ipsets = new IpsetTable();
    private final Map<Family, ChainTable> chains = new EnumMap<>(Family.class);
    /** The flow sets the kernel holds, as read back or since written. */
    private final Set<String> flowSets = new TreeSet<>();

    public IptablesBackend(IptablesVariant variant, CommandRunner runner, Metrics metrics, Settings settings) {
        super(metrics);
        this.variant = variant;
        this.runner = runner;
        this.settings = settings;
        this.rules = new IptablesRules(settings.markBit(), settings.passBit(), new IptablesDrops(flowMarks));
        for (Family f : Family.values()) {
            chains.put(f, new ChainTable());
        }
    }

    @Override
    protected CommandRunner runner() {
        return runner;
    }

    @Override
    public String name() {
        return variant.backendName();
    }

    /**
     * Lists, per family, the chains that send packets to the agent's rules ({@code iptables -S} of
     * FORWARD, NPM-FORWARD, INPUT, NPM-INPUT and the two dispatch chains: a flushed table or a CNI's
     * rewrite shows there) and
     * the names of the sets ({@code ipset list -n}). The pod and policy chains and the sets' members, most
     * of what the agent holds at scale, wait for the next full comparison: {@code iptables-save} of 10,000
     * policies' chains takes seconds on iptables-nft.
     */
    @Override
    protected boolean entryPointsAsWritten() {
        return setsAsWritten() && hooksAsWritten();
    }

    /** The agent's chains FORWARD and INPUT jump to, and the dispatch chains those jump to: compared rule by rule. */
    private static final Set<String> OWN_HOOK_CHAINS = Set.of(Names.FORWARD_CHAIN, Names.INPUT_CHAIN,
            Names.chain(new ChainId.Dispatch(Direction.EGRESS, Family.IPV4)), Names.chain(new ChainId.Dispatch(Direction.INGRESS, Family.IPV4)));
    /** Where packets enter: FORWARD and INPUT (only for the jumps), and the agent's chains above. */
    private static final List<String> HOOK_CHAINS = List.of("FORWARD", Names.FORWARD_CHAIN, "INPUT", Names.INPUT_CHAIN,
            Names.chain(new ChainId.Dispatch(Direction.EGRESS, Family.IPV4)), Names.chain(new ChainId.Dispatch(Direction.INGRESS, Family.IPV4)));

    private boolean hooksAsWritten() {
        for (Family f : Family.values()) {
            StringBuilder listed = new StringBuilder();
            for (String chain : HOOK_CHAINS) {
                CommandResult r = runner.run(List.of(variant.command(f), "-w", Long.toString(settings.lockWait().toSeconds()),
                        "-t", "filter", "-S", chain), "", settings.timeout());
                if (r.ok()) { // else there is no such chain: it reads as absent
                    r.stdout().lines().forEach(l -> listed.append(l.startsWith("-N ") ? ":" + l.substring(3) + " - [0:0]" : l).append('\n'));
                }
            }
            ChainTable seen = new ChainTable();
            seen.load(listed.toString());
            if (!chains.get(f).sameAs(seen, OWN_HOOK_CHAINS)) {
                return false;
            }
        }
        return true;
    }

    private boolean setsAsWritten() {
        CommandResult r = runner.run(List.of("ipset", "list", "-n"), "", settings.timeout());
        if (!r.ok()) {
            throw new BackendException("cannot list ipsets: " + r.errorSummary(), "");
        }
        Set<String> ours = new TreeSet<>();
        r.stdout().lines().map(String::strip).filter(n -> n.startsWith(Names.SET_PREFIX) && !IpsetFlowSets.isFlowSet(n)).forEach(ours::add);
        return ours.equals(ipsets.names()) && IpsetFlowSets.present(r.stdout()).equals(IpsetFlowSets.names());
    }

    @Override
    protected void removeAll() {
        readBack();
        for (Family f : Family.values()) {
            String input = chains.get(f).uninstallInput();
            if (!input.isEmpty()) {
                restore(f, input, "uninstall");
            }
        }
        StringBuilder destroy = new StringBuilder();
        ipsets.names().forEach(n -> destroy.append("destroy ").append(n).append('\n'));
        flowSets.forEach(n -> destroy.append("destroy ").append(n).append('\n')); // after the chains that named them
        if (destroy.length() > 0) {
            ipsetRestore(destroy.toString());
        }
        readBack();
    }

    @Override
    public synchronized BackendStatus status() {
        long ruleCount = chains.values().stream().mapToLong(ChainTable::rules).sum();
        return new BackendStatus(name(), model.policyCount(), ruleCount, ipsets.count() + flowSets.size(), ipsets.entries());
    }

    @Override
    protected int write(NetfilterModel.Dirty dirty, boolean full, String operation) {
        Set<SetId> touchedSets = new HashSet<>(dirty.sets());
        touchedSets.addAll(dirty.members().keySet());
        for (SetId set : touchedSets) {
            if (model.exists(set)) {
                names.claim(Names.ipset(set), set);
            } else {
                names.release(Names.ipset(set), set);
            }
        }
        IpsetTable.Plan sets = ipsets.plan(model, dirty.sets(), dirty.members(), full);
        Map<Family, ChainTable.Plan> plans = new EnumMap<>(Family.class);
        for (Family f : Family.values()) {
            plans.put(f, chainPlan(f, dirty.chains(), full));
        }
        int changed = sets.prepare().size() + sets.destroy().size();
        // The flow sets, when a read-back lacks them, in the same restore as the other sets: before any chain names them.
        String createFlowSets = IpsetFlowSets.createInput(flowSets);
        if (!sets.prepare().isEmpty() || !createFlowSets.isEmpty()) {
            try {
                ipsetRestore(createFlowSets + (sets.prepare().isEmpty() ? "" : sets.prepareInput()));
            } catch (BackendException e) {
                reloadSets(); // ipset applies a restore line by line: learn what it did
                throw e;
            }
            ipsets.preparedOk(sets);
            changed += IpsetFlowSets.names().size() - flowSets.size();
            flowSets.addAll(IpsetFlowSets.names());
        }
        for (Family f : Family.values()) {
            ChainTable.Plan plan = plans.get(f);
            if (!plan.isEmpty()) {
                restore(f, plan.input(), operation);
                chains.get(f).committed(plan);
                changed += plan.changes();
            }
        }
        if (!sets.destroy().isEmpty()) {
            try {
                ipsetRestore(sets.destroyInput());
            } catch (BackendException e) {
                reloadSets();
                throw e;
            }
            ipsets.destroyedOk(sets);
        }
        return changed;
    }

    private ChainTable.Plan chainPlan(Family family, Set<ChainId> touched, boolean full) {
        Map<String, List<ChainTable.Line>> wanted = new HashMap<>();
        Set<String> unwanted = new HashSet<>();
        // In name order: attribution numbers are given as chains render, so the same state renders the same input.
        List<ChainId> ordered = touched.stream().filter(id -> id.family() == family)
                .sorted(java.util.Comparator.comparing(Names::chain)).toList();
        for (ChainId id : ordered) {
            String chain = Names.chain(id);
            if (model.exists(id)) {
                names.claim(chain, owner(id));
                wanted.put(chain, ChainTable.lines(chain, rules.rules(model, id)));
            } else {
                unwanted.add(chain);
                names.release(chain, owner(id));
            }
        }
        if (full) {
            for (IptablesRules.Hook h : IptablesRules.Hook.values()) {
                wanted.put(h.chain(), ChainTable.lines(h.chain(), rules.fixedChain(h)));
            }
            unwanted.addAll(chains.get(family).chains()); // orphans of any earlier run
        }
        return chains.get(family).plan(wanted, unwanted, full);
    }

    /** What a chain name stands for, both families alike (they share chain names). */
    private static Object owner(ChainId id) {
        if (id instanceof ChainId.PolicyChain p) {
            return List.of("policy", p.policy(), p.direction());
        }
        if (id instanceof ChainId.PodChain p) {
            return List.of("pod", p.pod(), p.direction());
        }
        if (id instanceof ChainId.ClusterPolicyChain p) {
            return List.of("clusterpolicy", p.policy(), p.direction());
        }
        return List.of("dispatch", ((ChainId.Dispatch) id).direction());
    }

    /**
     * {@code ipset save} of each flow set: its elements with their counters. A set not there (flows never
     * rendered yet, or destroyed by hand until the next reconcile) holds nothing to count.
     */
    @Override
    protected CountedFlow.Reading readFlowCounters() {
        List<CountedFlow> flows = new ArrayList<>();
        int full = 0;
        for (Direction d : Direction.values()) {
            for (Family f : Family.values()) {
                String name = IpsetFlowSets.name(d, f);
                CommandResult r = runner.run(List.of("ipset", "save", name), "", settings.timeout());
                if (!r.ok()) {
                    if (r.stderr().contains("does not exist")) {
                        continue;
                    }
                    throw new BackendException("cannot list flow set " + name + ": " + r.errorSummary(), "");
                }
                if (IpsetFlowSets.parse(r.stdout(), d, flows)) {
                    full++;
                }
            }
        }
        return new CountedFlow.Reading(flows, full);
    }

    @Override
    protected void readBack() {
        reloadSets();
        for (Family f : Family.values()) {
            CommandResult r = runner.run(List.of(variant.save(f), "-t", "filter"), "", settings.timeout());
            if (!r.ok()) {
                throw new BackendException("cannot read back the filter table: " + r.errorSummary(), "");
            }
            chains.get(f).load(r.stdout());
        }
    }

    private void reloadSets() {
        CommandResult r = runner.run(List.of("ipset", "save"), "", settings.timeout());
        if (!r.ok()) {
            throw new BackendException("cannot read back ipsets: " + r.errorSummary(), "");
        }
        ipsets.load(r.stdout());
        flowSets.clear();
        flowSets.addAll(IpsetFlowSets.present(r.stdout()));
    }

    private void ipsetRestore(String input) {
        long start = System.nanoTime();
        CommandResult r = runner.run(List.of("ipset", "restore"), input, settings.timeout());
        metrics.ipsetRestoreLatency.observe(Metrics.secondsSince(start));
        if (!r.ok()) {
            throw new BackendException(r.errorSummary(), input);
        }
    }

    private void restore(Family family, String input, String operation) {
        long start = System.nanoTime();
        List<String> argv = List.of(variant.restore(family), "--noflush", "-w", Long.toString(settings.lockWait().toSeconds()));
        CommandResult r = runner.run(argv, input, settings.timeout());
        metrics.iptablesRestoreLatency.labelValues(operation).observe(Metrics.secondsSince(start));
        if (!r.ok()) {
            metrics.iptablesRestoreFailures.labelValues(operation).inc();
            throw new BackendException(r.errorSummary(), input);
        }
    }
}
