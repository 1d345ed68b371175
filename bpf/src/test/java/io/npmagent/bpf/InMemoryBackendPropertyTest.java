package io.npmagent.bpf;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.bpf.maps.EndpointMap;
import io.npmagent.bpf.maps.IpcacheMap;
import io.npmagent.bpf.maps.LocalAddressMap;
import io.npmagent.bpf.maps.PolicyMap;
import io.npmagent.bpf.maps.StateMap;
import io.npmagent.bpf.model.BpfModel;
import io.npmagent.bpf.model.PolicyEntry;
import io.npmagent.bpf.model.Rendered;
import io.npmagent.bpf.testing.FakeMap;
import io.npmagent.dataplane.backend.BackendException;
import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The eBPF backend's writer over in-memory maps ({@link FakeMap}), pods placed by a table: random
 * batches, each maybe refused at any map operation (a batch's elements counted one by one, so a
 * refused batch may have landed in part), then given again, as the agent's queue does. After each
 * refusal the copy packets read is exactly as before; after each batch that lands it equals, up to the
 * numbering of endpoints and peer classes, a render from scratch of the whole cluster by a model of its
 * own; after an idle catch-up both copies do.
 */
class InMemoryBackendPropertyTest {
    private static final IpAddress NODE = IpAddress.parse("192.168.77.1");

    /** One step: an event, and the map operation its batch is refused at (none if negative). */
    record Step(ClusterEvent event, int refuseAt) {}

    @Provide
    Arbitrary<List<Step>> steps() {
        Arbitrary<Integer> refuseAt = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(1, Arbitraries.just(-1)),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0, 24)));
        return Combinators.combine(io.npmagent.dataplane.policy.ClusterPolicyArbitraries.eventOfBothKinds(), refuseAt).as(Step::new).list().ofMinSize(4).ofMaxSize(30);
    }

    @Property(tries = 300)
    void refusedBatchesLeaveWhatPacketsReadAndEveryLandedBatchEqualsARenderFromScratch(@ForAll("steps") List<Step> steps) {
        Node node = new Node();
        PolicyCompiler compiler = new PolicyCompiler("node-1");
        int refusals = 0;
        for (Step step : steps) {
            Batch batch = new Batch(compiler.apply(step.event()).delta());
            Map<String, Object> before = node.readCopy();
            node.faults.refuseOperation(step.refuseAt());
            try {
                node.backend.apply(batch);
            } catch (BackendException refused) {
                refusals++;
                assertThat(node.readCopy()).as("what packets read after a refused batch (%s)", step.event()).isEqualTo(before);
                node.faults.none();
                node.backend.apply(batch); // given again, as the queue does
            }
            node.faults.none();
            assertThat(node.readCopy()).as("what packets read after %s", step.event()).isEqualTo(node.scratch(compiler));
        }
        node.backend.quickReconcile();
        Map<String, Object> wanted = node.scratch(compiler);
        assertThat(node.copy(node.active())).isEqualTo(wanted);
        assertThat(node.copy(1 - node.active())).as("the other copy, after the idle catch-up").isEqualTo(wanted);
        net.jqwik.api.statistics.Statistics.collect(refusals > 0 ? "some batch refused" : "none refused");
    }

    @Property(tries = 100)
    void aRefusedCatchUpIsReadBackBeforeTheNextWrite(@ForAll("steps") List<Step> steps, @ForAll("refusal") int refuseAt) {
        Node node = new Node();
        PolicyCompiler compiler = new PolicyCompiler("node-1");
        for (Step step : steps) {
            node.backend.apply(new Batch(compiler.apply(step.event()).delta()));
        }
        node.faults.refuseOperation(refuseAt);
        try {
            node.backend.quickReconcile();
        } catch (RuntimeException refused) {
            // the catch-up (or the rescan's flip) was refused somewhere in the middle
        }
        node.faults.none();
        node.backend.quickReconcile();
        Map<String, Object> wanted = node.scratch(compiler);
        assertThat(node.copy(node.active())).isEqualTo(wanted);
        assertThat(node.copy(1 - node.active())).isEqualTo(wanted);
    }

    @Provide
    Arbitrary<Integer> refusal() {
        return Arbitraries.integers().between(0, 30);
    }

    /** A backend over fake maps; each local pod gets its own interface number, kept for life. */
    private static final class Node implements PodPlacer {
        final FakeMap.Faults faults = new FakeMap.Faults();
        final FakeMap state;
        final FakeMap endpoints;
        final FakeMap local;
        final FakeMap ipcache;
        final FakeMap policy;
        final Map<PodKey, Integer> ifindexOf = new HashMap<>();
        final Map<Integer, PodKey> podOf = new HashMap<>();
        final Set<Integer> attached = new HashSet<>();
        final BpfBackend backend;

        Node() {
            state = new FakeMap(StateMap.NAME, 1, faults);
            endpoints = new FakeMap(EndpointMap.NAME, EndpointMap.MAX_ENTRIES, faults);
            local = new FakeMap(LocalAddressMap.NAME, LocalAddressMap.MAX_ENTRIES, faults);
            ipcache = new FakeMap(IpcacheMap.NAME, IpcacheMap.MAX_ENTRIES, faults);
            policy = new FakeMap(PolicyMap.NAME, PolicyMap.MAX_ENTRIES, faults);
            Metrics metrics = new Metrics(new PrometheusRegistry());
            backend = new BpfBackend(new VersionedMaps(state, endpoints, local, ipcache, policy, metrics), this, hooks(),
                    new PodCounters(new FakeMap("npm_drops", 16, new FakeMap.Faults()), new FakeMap("npm_bw_stats", 16, new FakeMap.Faults())),
                    metrics);
        }

        private Attachments.Hooks hooks() {
            return new Attachments.Hooks() {
                @Override
                public void attach(int ifindex) {
                    attached.add(ifindex);
                }

                @Override
                public void detach(int ifindex) {
                    attached.remove(ifindex);
                }

                @Override
                public boolean ours(int ifindex) {
                    return attached.contains(ifindex);
                }
            };
        }

        @Override
        public Map<PodKey, Integer> place(Map<PodKey, Rendered.Endpoint> eps, Set<PodKey> pods, boolean rescan) {
            Map<PodKey, Integer> out = new HashMap<>();
            for (PodKey pod : pods) {
                if (eps.containsKey(pod)) {
                    out.put(pod, ifindex(pod));
                }
            }
            return out;
        }

        private int ifindex(PodKey pod) {
            return ifindexOf.computeIfAbsent(pod, p -> {
                int i = 100 + ifindexOf.size();
                podOf.put(i, p);
                return i;
            });
        }

        @Override
        public Set<IpAddress> nodeAddresses() {
            return Set.of(NODE);
        }

        int active() {
            List<byte[][]> s = state.contents();
            return s.isEmpty() ? 0 : StateMap.version(s.get(0)[1]) & 1;
        }

        Map<String, Object> readCopy() {
            return copy(active());
        }

        /** One copy of the maps, endpoints named by pod and peer classes by the prefixes that carry them. */
        Map<String, Object> copy(int version) {
            Map<Integer, PodKey> podOfEndpoint = new HashMap<>();
            Map<PodKey, List<Object>> eps = new HashMap<>();
            for (byte[][] kv : endpoints.contents()) {
                EndpointMap.Key k = EndpointMap.Key.decode(kv[0]);
                if (k.version() == version) {
                    EndpointMap.Value v = EndpointMap.Value.decode(kv[1]);
                    PodKey pod = podOf.get(k.ifindex());
                    podOfEndpoint.put(v.id(), pod);
                    eps.put(pod, List.of(v.ingress(), v.egress(), v.ingressRate(), v.egressRate()));
                }
            }
            Map<IpAddress, PodKey> loc = new HashMap<>();
            for (byte[][] kv : local.contents()) {
                LocalAddressMap.Key k = LocalAddressMap.Key.decode(kv[0]);
                if (k.version() == version) {
                    loc.put(k.address(), podOf.get(LocalAddressMap.ifindex(kv[1])));
                }
            }
            Map<Cidr, IpcacheMap.Value> ipc = new HashMap<>();
            for (byte[][] kv : ipcache.contents()) {
                IpcacheMap.Key k = IpcacheMap.Key.decode(kv[0]);
                if (k.version() == version) {
                    ipc.put(k.prefix(), IpcacheMap.Value.decode(kv[1]));
                }
            }
            Map<PolicyEntry, Integer> pol = new HashMap<>();
            for (byte[][] kv : policy.contents()) {
                PolicyMap.Key k = PolicyMap.Key.decode(kv[0]);
                if (k.version() == version) {
                    pol.put(PolicyEntry.of(k), PolicyMap.verdict(kv[1]));
                }
            }
            return named(eps, loc, ipc, pol, podOfEndpoint);
        }

        /** What a model of its own renders for the whole cluster, with this node's interfaces and address. */
        Map<String, Object> scratch(PolicyCompiler compiler) {
            BpfModel fresh = new BpfModel(backend.flows().refs()); // the same attributions, so the same numbers
            fresh.nodeAddresses(Set.of(NODE));
            fresh.apply(DesiredDelta.of(compiler.snapshot()));
            Rendered r = fresh.render();
            Map<Integer, PodKey> podOfEndpoint = new HashMap<>();
            Map<PodKey, List<Object>> eps = new HashMap<>();
            Map<IpAddress, PodKey> loc = new HashMap<>();
            r.endpoints().forEach((pod, ep) -> {
                ifindex(pod);
                podOfEndpoint.put(ep.id(), pod);
                eps.put(pod, List.of(ep.ingress(), ep.egress(), ep.bandwidth().ingressBitsPerSecond(),
                        ep.bandwidth().egressBitsPerSecond()));
                ep.ips().forEach(ip -> loc.put(ip, pod));
            });
            Map<Cidr, IpcacheMap.Value> ipc = new HashMap<>(r.ipcache());
            r.node().forEach((prefix, identity) -> ipc.put(prefix, IpcacheMap.Value.of(identity)));
            return named(eps, loc, ipc, r.policy(), podOfEndpoint);
        }

        /**
         * Ids the model numbers as it goes (endpoints, peer classes, atoms) replaced by what they stand
         * for, so two models' renders of one cluster compare equal; entries of a class no address maps to
         * are left out (no packet reads them).
         */
        private static Map<String, Object> named(Map<PodKey, List<Object>> eps, Map<IpAddress, PodKey> loc,
                Map<Cidr, IpcacheMap.Value> ipc, Map<PolicyEntry, Integer> pol, Map<Integer, PodKey> podOfEndpoint) {
            // a class by the prefixes that map to it; an atom by those that map to it or fall back to it
            Map<Integer, Set<String>> prefixesOf = new HashMap<>();
            ipc.forEach((prefix, v) -> {
                prefixesOf.computeIfAbsent(v.identity(), k -> new TreeSet<>()).add(prefix.toString());
                if (v.atom() != IpcacheMap.NO_ATOM) {
                    prefixesOf.computeIfAbsent(v.atom(), k -> new TreeSet<>()).add(prefix.toString());
                }
            });
            Map<Cidr, Object> ipcNamed = new HashMap<>();
            ipc.forEach((prefix, v) -> ipcNamed.put(prefix, List.of(identity(v.identity(), prefixesOf), identity(v.atom(), prefixesOf))));
            Set<List<Object>> polNamed = new HashSet<>();
            for (Map.Entry<PolicyEntry, Integer> entry : pol.entrySet()) {
                PolicyEntry e = entry.getKey();
                if (e.identity() >= BpfModel.NODE_BASE && !prefixesOf.containsKey(e.identity())) {
                    // A class no address maps to: no packet reads its entries, and its number depends on the history.
                    continue;
                }
                polNamed.add(List.of(String.valueOf(podOfEndpoint.get(e.endpoint())), e.direction(), identity(e.identity(), prefixesOf),
                        e.anyProtocol(), e.protocol(), e.port(), e.portBits(), entry.getValue()));
            }
            return Map.of("endpoints", eps, "local", loc, "ipcache", ipcNamed, "policy", polNamed);
        }

        /** A numbered class, atom or node identity by its prefixes; identities the compiler numbers, and the reserved ones, as they are. */
        private static Object identity(int id, Map<Integer, Set<String>> prefixesOf) {
            return id >= BpfModel.NODE_BASE ? prefixesOf.get(id) : id;
        }
    }
}
