package io.npmagent.bpf;

import io.npmagent.bpf.libbpf.BpfException;
import io.npmagent.bpf.libbpf.BpfMap;
import io.npmagent.bpf.libbpf.BpfObject;
import io.npmagent.bpf.libbpf.BpfProgram;
import io.npmagent.bpf.libbpf.CgroupLink;
import io.npmagent.bpf.libbpf.NetfilterLink;
import io.npmagent.bpf.libbpf.NetnsThread;
import io.npmagent.bpf.maps.BandwidthConfigMap;
import io.npmagent.bpf.maps.BandwidthStatsMap;
import io.npmagent.bpf.maps.DropMap;
import io.npmagent.bpf.maps.EndpointMap;
import io.npmagent.bpf.maps.LocalAddressMap;
import io.npmagent.bpf.maps.IpcacheMap;
import io.npmagent.bpf.maps.PolicyMap;
import io.npmagent.bpf.maps.StateMap;
import io.npmagent.bpf.maps.VerdictMaps;
import io.npmagent.bpf.model.BpfModel;
import io.npmagent.bpf.model.Rendered;
import io.npmagent.dataplane.backend.Backend;
import io.npmagent.dataplane.backend.BackendException;
import io.npmagent.dataplane.backend.BackendStatus;
import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.bandwidth.BandwidthSettings;
import io.npmagent.dataplane.flow.AttributionRefs;
import io.npmagent.dataplane.flow.FlowSource;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.exec.CommandRunner;
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
import java.util.stream.Stream;

/**
 * The main backend: tc programs on each local pod's host-side interface, judging from pinned maps.
 *
 * <p><b>A batch's atomicity</b> (decided here, in {@link #apply} and {@link VersionedMaps#commit}): a
 * packet sees all of a batch or none of it. The maps packets read are double-buffered: every key of
 * {@code npm_endpoints}, {@code npm_local}, {@code npm_ipcache} and {@code npm_policy} carries a copy bit,
 * and {@code npm_state} says which copy packets read. The {@link BpfModel} takes the batch and renders
 * what every map should hold; {@link LocalPods} places the pods that changed on their interfaces
 * ({@link PodPlacer}); {@link VersionedMaps#commit} writes the difference into the copy packets do not
 * read (one batched write per map, with a per-element fallback) and then flips {@code npm_state} (one
 * map write): from that instant every packet sees the whole new state, and until it none sees any of
 * it. Then {@link Attachments} puts our programs on the interfaces of pods that appeared (a refused
 * attachment leaves that pod unplaced, looked for again, and does not fail the batch). A write refused
 * before the flip fails the batch: no packet saw any of it, the model takes the batch back, and both
 * copies are read back at the next call, which writes what the refused write left. The copy left behind
 * catches up at the next commit, as it becomes the one written, or in idle time
 * ({@link VersionedMaps#catchUp}). What happens to a refused batch next (part by part, retries) is the
 * queue's: "A batch's retry and isolation" in {@code dataplane}'s
 * {@link io.npmagent.dataplane.batch.BatchQueue}.
 *
 * <p><b>Restart.</b> Maps are pinned under the backend's bpffs directory and tc filters stay on their
 * interfaces, so a killed agent leaves enforcement in place. A new one adopts the pinned maps (libbpf
 * reuses them by name), reads both copies back, and writes only what differs from the desired state:
 * a restart with nothing changed writes no entry but those whose flow-verdict attribution number this run gave
 * otherwise (numbers belong to a run: {@code AttributionRefs}), each rewritten once, in the first batch's flip. Its
 * freshly loaded programs replace the old ones on
 * each interface in place ({@code BPF_TC_F_REPLACE}), never leaving an interface without one.
 * {@link #uninstall} detaches and unpins everything.
 *
 * <p><b>Threads.</b> One flush thread calls it; tc calls run on a thread inside the node's network
 * namespace ({@link NetnsThread}); the scrape thread reads the counters ({@link PodCounters}).
 */
public final class BpfBackend implements Backend {
    private static final System.Logger LOG = System.getLogger(BpfBackend.class.getName());
    static final String OBJECT = "tc_pod.o";
    static final String FROM_POD = "npm_from_pod";
    static final String TO_POD = "npm_to_pod";
    static final String POD_EGRESS = "npm_pod_egress";
    private static final String NO_NETFILTER = "this kernel loads no netfilter programs (BPF_PROG_TYPE_NETFILTER, Linux 6.4): "
            + "egress to addresses that are no pod is judged before DNAT, so a policy admitting a Service's pods does not admit its ClusterIP";

    private final Kernel kernel;
    /** The numbers written beside verdicts ({@link BpfModel}), which the flow reports carry back. */
    private final AttributionRefs refs = new AttributionRefs();
    private final BpfModel model = new BpfModel(refs);
    private final BpfFlows flows;
    private final VersionedMaps maps;
    private final PodPlacer placer;
    private final LocalPods pods = new LocalPods();
    private final Attachments attachments;
    private final PodCounters counters;
    /** Whether a converge has run: the first redoes everything. */
    private boolean primed;
    /** Whether pins of another layout were set aside at start, to remove once our programs replaced theirs. */
    private boolean setAside;
    /** The node's addresses the model was last given, and the identities they were written with. */
    private Set<IpAddress> nodeAddresses = Set.of();
    private Map<Cidr, Integer> nodeIdentities = Map.of();

    /**
     * What this run loaded and holds in the kernel beside the maps the writer owns: the pin directory,
     * the pods' namespace, the forward hook (null on a kernel without netfilter programs, or in a unit test:
     * then tc judges all), and every handle to close.
     */
    private record Kernel(Path pinDir, String netnsName, NetnsThread netns, CommandRunner ip, ForwardHooks forward,
            CongestionHook congestion, PinnedCgroupLink backPressure, List<AutoCloseable> handles) {
        static final Kernel NONE = new Kernel(null, null, null, null, null, null, null, List.of());
    }

    private record Parts(Kernel kernel, VersionedMaps maps, PodPlacer placer, Attachments.Hooks hooks, PodCounters counters,
            BpfFlows.Maps flows, boolean setAside) {}

    /**
     * Loads the programs and adopts or creates the pinned maps.
     *
     * @param pinDir where maps and programs are pinned (a directory on a bpffs mount)
     * @param netns  the network namespace of the pods' interfaces (null: this process's)
     * @param ip     runs {@code ip} and {@code bridge} in that namespace, to find pods' interfaces
     * @param bandwidth how the programs hold pods to their rate limits
     * @param cgroupRoot the cgroup (cgroup2) that holds the pods' processes, where pods' congestion
     *                   controls are applied ({@link CongestionHook}) and their TCP told to slow down
     *                   before their egress limit drops (backpressure.h); null does neither
     */
    public BpfBackend(Path pinDir, String netns, CommandRunner ip, BandwidthSettings bandwidth, Path cgroupRoot, Metrics metrics) {
        this(load(pinDir, netns, ip, bandwidth, cgroupRoot, metrics), metrics);
    }

    /** Without pods' congestion controls. */
    public BpfBackend(Path pinDir, String netns, CommandRunner ip, BandwidthSettings bandwidth, Metrics metrics) {
        this(pinDir, netns, ip, bandwidth, null, metrics);
    }

    /** Over maps, placement and hooks of the caller's (unit tests: in-memory maps, a table of interfaces). */
    BpfBackend(VersionedMaps maps, PodPlacer placer, Attachments.Hooks hooks, PodCounters counters, Metrics metrics) {
        this(new Parts(Kernel.NONE, maps, placer, hooks, counters, null, false), metrics);
    }

    private BpfBackend(Parts parts, Metrics metrics) {
        this.kernel = parts.kernel();
        this.maps = parts.maps();
        this.placer = parts.placer();
        this.attachments = new Attachments(parts.hooks());
        this.counters = parts.counters();
        this.flows = new BpfFlows(refs, parts.flows());
        this.setAside = parts.setAside();
        metrics.policyDropsFrom(counters::drops);
        metrics.bandwidthFrom(counters::bandwidth);
        if (kernel.congestion() != null) {
            metrics.congestionFrom(kernel.congestion()::counts);
        }
    }

    private static Parts load(Path pinDir, String netnsName, CommandRunner ip, BandwidthSettings bandwidth, Path cgroupRoot, Metrics metrics) {
        try {
            Files.createDirectories(pinDir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the pin directory " + pinDir, e);
        }
        boolean netfilter = NetfilterLink.programsSupported();
        BpfProgram forwardProgram = null;
        BpfMap forwardHooks;
        boolean setAside;
        BpfMap state;
        BpfMap endpoints;
        BpfMap local;
        BpfMap ipcache;
        BpfMap policy;
        BpfMap drops;
        BpfMap bandwidthStats;
        BpfProgram fromPod;
        BpfProgram toPod;
        BpfProgram sockOps;
        BpfMap tcpStats;
        BpfProgram podEgress;
        BpfFlows.Maps flows;
        try (BpfObject object = BpfObject.open(BpfObject.resource(OBJECT), "npm_agent", pinDir)) {
            setAside = !PinnedMaps.setAsideIncompatible(object, pinDir).isEmpty();
            object.prepareProgram(ForwardHooks.PROGRAM, netfilter, NetfilterLink.PROG_TYPE_NETFILTER, NetfilterLink.ATTACH_NETFILTER);
            object.load();
            state = object.map(StateMap.NAME);
            endpoints = object.map(EndpointMap.NAME);
            local = object.map(LocalAddressMap.NAME);
            ipcache = object.map(IpcacheMap.NAME);
            policy = object.map(PolicyMap.NAME);
            drops = object.map(DropMap.NAME);
            bandwidthStats = object.map(BandwidthStatsMap.NAME);
            try (BpfMap config = object.map(BandwidthConfigMap.NAME)) {
                config.update(BandwidthConfigMap.key(), BandwidthConfigMap.value(bandwidth));
            }
            fromPod = object.program(FROM_POD);
            toPod = object.program(TO_POD);
            sockOps = object.program(CongestionHook.PROGRAM);
            tcpStats = object.map(CongestionHook.STATS);
            podEgress = object.program(POD_EGRESS);
            forwardHooks = object.map(ForwardHooks.MAP);
            flows = new BpfFlows.Maps(object.map(VerdictMaps.CONFIG), object.map(VerdictMaps.FLOWS), object.map(VerdictMaps.EVENTS),
                    object.map(VerdictMaps.LOST));
            if (netfilter) {
                forwardProgram = object.program(ForwardHooks.PROGRAM);
            }
        }
        pin(pinDir, fromPod, "prog_" + FROM_POD);
        pin(pinDir, toPod, "prog_" + TO_POD);
        NetnsThread netns = NetnsThread.enter(netnsName);
        ForwardHooks forward = null;
        if (forwardProgram != null) {
            pin(pinDir, forwardProgram, "prog_" + ForwardHooks.PROGRAM);
            forward = ForwardHooks.attach(forwardProgram, forwardHooks, pinDir, netns);
        } else {
            ForwardHooks.writeBits(forwardHooks, 0); // no hook: tc judges every packet itself
            forwardHooks.close();
        }
        CongestionHook congestion = null;
        PinnedCgroupLink backPressure = null;
        if (cgroupRoot != null) {
            pin(pinDir, sockOps, "prog_" + CongestionHook.PROGRAM);
            congestion = CongestionHook.attach(sockOps, tcpStats, pinDir, cgroupRoot);
            pin(pinDir, podEgress, "prog_" + POD_EGRESS);
            // Linked whatever the flow control: the program reads it from npm_bw_config at each packet.
            backPressure = PinnedCgroupLink.attach(podEgress, pinDir, cgroupRoot, CgroupLink.ATTACH_CGROUP_INET_EGRESS,
                    "pods' TCP told to slow down before their egress limit drops",
                    "pods' TCP is not told to slow down before their egress limit, only dropped at its horizon");
        } else {
            sockOps.close();
            tcpStats.close();
            podEgress.close();
        }
        List<AutoCloseable> handles = new ArrayList<>(List.of(state, endpoints, local, ipcache, policy, drops, bandwidthStats, fromPod, toPod));
        if (forward != null) {
            handles.add(forward);
        }
        if (congestion != null) {
            handles.add(congestion);
            handles.add(backPressure);
        }
        handles.add(netns);
        return new Parts(new Kernel(pinDir, netnsName, netns, ip, forward, congestion, backPressure, handles),
                new VersionedMaps(state, endpoints, local, ipcache, policy, metrics),
                new PodInterfaces(new InterfaceResolver(ip)), new TcHooks(netns, fromPod, toPod, bandwidth.bigTcp() ? new BigTcp() : null),
                new PodCounters(drops, bandwidthStats), flows, setAside);
    }

    /** Pins this run's program where the last run's was (for bpftool and for uninstall to find). */
    private static void pin(Path pinDir, BpfProgram program, String name) {
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
    public boolean enforcesBandwidth() {
        return true;
    }

    /** Lands the batch whole or takes it back: "A batch's atomicity" above. */
    @Override
    public synchronized void apply(Batch batch) {
        model.apply(batch.delta());
        try {
            converge(false);
        } catch (BpfException | BackendException e) {
            model.apply(batch.delta().inverse()); // the maps read back at the next call what the refused write left
            throw e instanceof BackendException b ? b : new BackendException(e.getMessage(), "", e);
        } finally {
            maps.updateGauges();
        }
    }

    /** Reads every map back, then does what {@link #quickReconcile} does; the maps then match the model. */
    @Override
    public synchronized int reconcile() {
        maps.readBack();
        return quickReconcile();
    }

    /**
     * Looks for every local pod's interface again and checks the programs' attachment, which a CNI or a
     * restarted pod can undo at any moment; writes what that changed. The maps themselves only this agent
     * writes; reading them back (at 100,000 pods, seconds: the LPM ipcache has no batch read) is left to
     * the full {@link #reconcile}.
     */
    @Override
    public synchronized int quickReconcile() {
        int repaired = converge(true);
        if (kernel.forward() != null) {
            repaired += kernel.forward().repair();
        }
        if (kernel.congestion() != null) {
            repaired += kernel.congestion().repair();
            repaired += kernel.backPressure().repair();
        }
        maps.catchUp();
        repaired += attachments.repair(pods.unplaced());
        maps.updateGauges();
        return repaired;
    }

    @Override
    public synchronized void uninstall() {
        closeHandles();
        attachments.clear();
        if (kernel.pinDir() != null) {
            uninstall(kernel.pinDir(), kernel.netnsName(), kernel.ip());
        }
    }

    /**
     * Removes everything any run of this backend left in namespace {@code netns} and under
     * {@code pinDir}, without loading anything: our filter (known by its handle and priority) from every
     * interface that has one, whichever pods' they were, the neighbour entries it made for bridged pods,
     * then every pin. Enforcement ends here.
     */
    public static void uninstall(Path pinDir, String netns, CommandRunner ip) {
        List<Integer> links = InterfaceResolver.allInterfaces(ip);
        InterfaceResolver.releaseAll(ip);
        try (NetnsThread inside = NetnsThread.enter(netns)) {
            inside.run(() -> links.forEach(TcHooks::detachHere));
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
        return new BackendStatus(name(), model.policyCount(), maps.activePolicyEntries(), maps.activeEndpoints(), maps.activeIpcacheEntries());
    }

    /** Null when egress to Services is judged after DNAT in both families; else what is not, and why. */
    public synchronized String forwardHookProblem() {
        return kernel.forward() == null ? NO_NETFILTER : kernel.forward().problem();
    }

    /** Whether pods' congestion controls are applied: a cgroup root was given and the link is in place. */
    @Override
    public synchronized boolean enforcesCongestion() {
        return kernel.congestion() != null && kernel.congestion().problem() == null;
    }

    /** Null when pods' congestion controls are applied; else why not. */
    public synchronized String congestionProblem() {
        if (kernel.congestion() == null) {
            return "no --cgroup-root: pods' npm-agent.io/tcp-congestion is not applied";
        }
        return kernel.congestion().problem();
    }

    /** Null when pods' TCP can be told to slow down before their egress limit (the link is in place); else why not. */
    public synchronized String backPressureProblem() {
        if (kernel.backPressure() == null) {
            return "no --cgroup-root: pods' TCP is not told to slow down before their egress limit, only dropped at its horizon";
        }
        return kernel.backPressure().problem();
    }

    /** Local pods whose interface was not found at the last batch or reconcile, so not enforced yet. */
    public synchronized Set<PodKey> unplaced() {
        return Set.copyOf(pods.unplaced());
    }

    /** The programs' flow verdicts, with the numbers this backend writes beside its verdicts. */
    @Override
    public FlowSource flows() {
        return flows;
    }

    @Override
    public synchronized void close() {
        flows.close();
        closeHandles();
    }

    private void closeHandles() {
        for (AutoCloseable c : kernel.handles()) {
            try {
                c.close();
            } catch (Exception e) {
                LOG.log(System.Logger.Level.DEBUG, "bpf: closing {0}: {1}", c, e.getMessage());
            }
        }
    }

    /**
     * Renders, places the pods that changed (every pod with {@code rescan}), and commits the maps; then
     * attaches to the interfaces of pods that appeared and detaches from those left without one.
     */
    private int converge(boolean rescan) {
        nodeAddresses = placer.nodeAddresses();
        model.nodeAddresses(nodeAddresses);
        int written = convergeOnce(rescan);
        if (!placer.nodeAddresses().equals(nodeAddresses)) { // placing the pods found the node's addresses changed
            nodeAddresses = placer.nodeAddresses();
            model.nodeAddresses(nodeAddresses);
            written += convergeOnce(false);
        }
        return written;
    }

    private int convergeOnce(boolean rescan) {
        Rendered r = model.render();
        Rendered.Changes changes = r.changes();
        boolean everything = changes.all() || !primed;
        primed = true;
        maps.setPolicy(r.policy(), changes.policy());
        if (everything) {
            maps.everything();
        }

        // Interfaces of the pods that changed and of those not found yet (all, at a rescan or when everything
        // is redone). A rescan compares only the endpoints it touches: the ipcache and policy entries of
        // 100,000 pods are compared after a read-back, not every period.
        boolean placeAll = everything || rescan;
        Set<PodKey> candidates = new HashSet<>(placeAll ? r.endpoints().keySet() : changes.pods());
        candidates.addAll(pods.unplaced());
        if (placeAll) {
            candidates.addAll(pods.placed());
        }
        Map<PodKey, Integer> found = placer.place(r.endpoints(), candidates, rescan || changes.all());
        Set<Integer> touched = pods.place(candidates, r.endpoints(), found, maps);
        if (!pods.unplaced().isEmpty() && !candidates.isEmpty()) {
            LOG.log(System.Logger.Level.INFO, "bpf: no interface found yet for {0} local pods (first: {1}); looked for again at the next batch",
                    pods.unplaced().size(), pods.unplaced().iterator().next());
        }
        Map<Cidr, Integer> node = r.node();
        if (everything || !node.equals(nodeIdentities)) {
            nodeIdentities = node;
            Map<Cidr, IpcacheMap.Value> prefixes = new HashMap<>(r.ipcache());
            node.forEach((prefix, identity) -> prefixes.put(prefix, IpcacheMap.Value.of(identity))); // no atom: the node's own entries decide
            maps.setIpcache(prefixes);
            everything = true;
        } else {
            for (Cidr prefix : changes.ipcache()) { // the addresses that came, went or moved; the node's own stay the node's
                IpcacheMap.Value peer = r.ipcache().get(prefix);
                if (node.containsKey(prefix)) {
                    continue;
                } else if (peer == null) {
                    maps.removeIpcache(prefix);
                } else {
                    maps.putIpcache(prefix, peer);
                }
            }
        }

        int written = maps.commit();

        if (everything) {
            touched.addAll(attachments.interfaces());
            touched.addAll(pods.byInterface().keySet());
        }
        attachments.attachAndDetach(touched, pods.byInterface(), pods.unplaced());
        if (setAside) {
            PinnedMaps.removeSetAside(kernel.pinDir()); // every placed pod's interface now runs our programs
            setAside = false;
        }
        if (everything || !touched.isEmpty()) {
            Map<Integer, PodKey> byEndpoint = new HashMap<>();
            pods.byInterface().forEach((ifindex, pod) -> byEndpoint.put(maps.endpoint(ifindex).id(), pod));
            counters.pods(byEndpoint);
        }
        return written;
    }
}
