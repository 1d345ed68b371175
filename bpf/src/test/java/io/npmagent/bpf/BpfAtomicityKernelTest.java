package io.npmagent.bpf;

import static io.npmagent.dataplane.model.PolicyFixtures.block;
import static io.npmagent.dataplane.model.PolicyFixtures.labels;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static io.npmagent.dataplane.model.PolicyFixtures.peers;
import static io.npmagent.dataplane.model.PolicyFixtures.pods;
import static io.npmagent.dataplane.model.PolicyFixtures.policy;
import static io.npmagent.dataplane.model.PolicyFixtures.port;
import static io.npmagent.dataplane.model.PolicyFixtures.ports;
import static io.npmagent.dataplane.model.PolicyFixtures.range;
import static io.npmagent.dataplane.model.PolicyFixtures.rule;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.bpf.libbpf.NetnsThread;
import io.npmagent.bpf.testing.BpfFs;
import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.bandwidth.BandwidthSettings;
import io.npmagent.dataplane.desired.DesiredStateInterpreter;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.harness.node.PodNetwork;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * No packet sees half an update: probes run across pods while 1,000 policy updates stream in, each
 * one changing how an allowed flow is represented (a selector peer becomes an ipBlock of the same
 * address and back, which moves the pod's address to another peer class in the ipcache and rewrites
 * the policy entries that admit it). A probe may see the state before or after the update in flight,
 * so a pair allowed in both must always connect and a pair denied in both never; a half-applied
 * update (the ipcache moved, the policy not yet) would deny an allowed pair.
 */
class BpfAtomicityKernelTest {
    private static final int UPDATES = 1000;

    @RegisterExtension
    final BpfFs fs = new BpfFs();
    private PodNetwork net;
    private BpfBackend backend;

    @AfterEach
    void teardown() {
        if (backend != null) {
            backend.close();
        }
        if (net != null) {
            net.close();
        }
    }

    /** b admits a (by label or, in version B, by address) and c only in version B. */
    private NetworkPolicy bIngress(boolean versionB) {
        NetworkPolicy.Peer a = versionB ? block(net.address("a", false) + "/32") : pods(match("app", "a"));
        NetworkPolicy.Peer a6 = versionB ? block(net.address("a", true) + "/128") : pods(match("app", "a"));
        List<NetworkPolicy.Rule> rules = new ArrayList<>(List.of(rule(peers(a, a6), ports(port("TCP", PodNetwork.PORT)))));
        if (versionB) {
            rules.add(rule(peers(pods(match("app", "c"))), ports(port("TCP", PodNetwork.PORT))));
        }
        return policy("x", "b-in").select(match("app", "b")).ingress(rules.toArray(NetworkPolicy.Rule[]::new)).build();
    }

    /** a may send only to b: by label, or in version B by address and a port range. */
    private NetworkPolicy aEgress(boolean versionB) {
        return versionB
                ? policy("x", "a-out").select(match("app", "a")).types("Egress").egress(rule(peers(
                        block(net.address("b", false) + "/32"), block(net.address("b", true) + "/128")),
                        ports(range("TCP", PodNetwork.PORT - 1, PodNetwork.PORT + 1)))).build()
                : policy("x", "a-out").select(match("app", "a")).types("Egress").egress(rule(peers(pods(match("app", "b"))),
                        ports(port("TCP", PodNetwork.PORT)))).build();
    }

    private record Probe(String from, String to, boolean v6) {
        @Override
        public String toString() {
            return from + "->" + to + (v6 ? " v6" : " v4");
        }
    }

    @Test
    void everyProbeSeesTheStateBeforeOrAfterTheUpdateInFlight() throws Exception {
        KernelTestSupport.require("ip", "python3");
        net = PodNetwork.create("a", "b", "c", "d");
        backend = new BpfBackend(fs.root().resolve("npm"), net.node().name(), net.node().runner(), BandwidthSettings.DEFAULTS, new Metrics(new PrometheusRegistry()));
        PolicyCompiler compiler = new PolicyCompiler(null);
        java.util.function.Consumer<ClusterEvent> apply = e -> backend.apply(new Batch(compiler.apply(e).delta()));
        apply.accept(new ClusterEvent.NamespaceUpserted(new Namespace("x", labels())));
        for (String name : new String[] {"a", "b", "c", "d"}) {
            apply.accept(new ClusterEvent.PodUpserted(Pod.builder("x", name).labels(labels("app", name))
                    .ip(net.address(name, false)).ip(net.address(name, true)).port("probe", PodNetwork.PORT, Protocol.TCP).build()));
        }
        apply.accept(new ClusterEvent.PolicyUpserted(bIngress(false)));
        apply.accept(new ClusterEvent.PolicyUpserted(aEgress(false)));

        // What each pair gets in every combination of versions, from the desired state alone.
        Map<Probe, Set<Boolean>> outcomes = new LinkedHashMap<>();
        List<Probe> probes = List.of(new Probe("a", "b", false), new Probe("a", "b", true), new Probe("c", "b", false),
                new Probe("d", "b", false), new Probe("a", "c", false), new Probe("d", "b", true));
        for (boolean bInB : new boolean[] {false, true}) {
            for (boolean aOutB : new boolean[] {false, true}) {
                PolicyCompiler look = new PolicyCompiler(null);
                look.apply(new ClusterEvent.NamespaceUpserted(new Namespace("x", labels())));
                for (String name : new String[] {"a", "b", "c", "d"}) {
                    look.apply(new ClusterEvent.PodUpserted(Pod.builder("x", name).labels(labels("app", name))
                            .ip(net.address(name, false)).ip(net.address(name, true)).port("probe", PodNetwork.PORT, Protocol.TCP).build()));
                }
                look.apply(new ClusterEvent.PolicyUpserted(bIngress(bInB)));
                look.apply(new ClusterEvent.PolicyUpserted(aEgress(aOutB)));
                DesiredStateInterpreter state = new DesiredStateInterpreter(look.snapshot());
                for (Probe p : probes) {
                    boolean ok = state.allowed(net.address(p.from(), p.v6()), net.address(p.to(), p.v6()), PodNetwork.PORT, Protocol.TCP);
                    outcomes.computeIfAbsent(p, k -> new HashSet<>()).add(ok);
                }
            }
        }
        Map<Probe, Boolean> always = new LinkedHashMap<>();
        outcomes.forEach((p, o) -> {
            if (o.size() == 1) {
                always.put(p, o.iterator().next());
            }
        });
        assertThat(always).as("the pairs the test relies on").containsEntry(new Probe("a", "b", false), true)
                .containsEntry(new Probe("a", "b", true), true).containsEntry(new Probe("d", "b", false), false)
                .containsEntry(new Probe("a", "c", false), false).containsEntry(new Probe("d", "b", true), false)
                .doesNotContainKey(new Probe("c", "b", false));

        AtomicBoolean updating = new AtomicBoolean(true);
        ExecutorService pool = Executors.newFixedThreadPool(probes.size());
        Map<Probe, Future<int[]>> results = new LinkedHashMap<>();
        for (Probe p : probes) {
            // A pair that must connect gets a generous timeout (a slow connect on a busy machine is no
            // denial); the others a short one, so they are tried often: one connect among them fails the test.
            int timeoutMs = Boolean.TRUE.equals(always.get(p)) ? 1000 : 20;
            results.put(p, pool.submit(() -> probeUntil(updating, p, timeoutMs)));
        }
        try {
            for (int i = 0; i < UPDATES; i++) {
                boolean versionB = (i / 2) % 2 == 0;
                apply.accept(new ClusterEvent.PolicyUpserted(i % 2 == 0 ? bIngress(versionB) : aEgress(versionB)));
            }
        } finally {
            updating.set(false);
        }
        for (Map.Entry<Probe, Future<int[]>> e : results.entrySet()) {
            int[] counts = e.getValue().get(); // {connected, refused}
            System.out.printf("%s: %d connected, %d not, during %d updates%n", e.getKey(), counts[0], counts[1], UPDATES);
            Boolean expected = always.get(e.getKey());
            assertThat(counts[0] + counts[1]).as("%s was probed throughout", e.getKey()).isGreaterThan(5);
            if (Boolean.TRUE.equals(expected)) {
                assertThat(counts[1]).as("%s is allowed before and after every update: never denied (%d probes)", e.getKey(),
                        counts[0] + counts[1]).isZero();
            } else if (Boolean.FALSE.equals(expected)) {
                assertThat(counts[0]).as("%s is denied before and after every update: never allowed", e.getKey()).isZero();
            }
        }
        pool.shutdownNow();
    }

    /** Connects from {@code p.from}'s namespace to {@code p.to} until told to stop; counts {connected, not}. */
    private int[] probeUntil(AtomicBoolean running, Probe p, int timeoutMs) throws Exception {
        InetSocketAddress to = new InetSocketAddress(java.net.InetAddress.getByName(net.address(p.to(), p.v6()).toString()), PodNetwork.PORT);
        try (NetnsThread inside = NetnsThread.enter(net.pod(p.from()).name())) {
            return inside.call(() -> {
                int[] counts = new int[2];
                while (running.get()) {
                    try (Socket s = new Socket()) {
                        s.setSoLinger(true, 0); // a reset on close: no TIME_WAIT to run out of ports
                        s.connect(to, timeoutMs);
                        counts[0]++;
                    } catch (IOException denied) {
                        counts[1]++;
                    }
                }
                return counts;
            });
        }
    }
}
