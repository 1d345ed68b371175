package io.npmagent.bpf.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ContainerPort;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.LabelSelector;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PodPhase;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.policy.ClusterEventsForTests;
import io.npmagent.dataplane.policy.PolicyCompiler;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * A render that redoes only the pods a delta touched gives exactly the maps a render from scratch
 * gives, after every event of random clusters (and the changes it reports cover every difference
 * from the render before).
 */
class IncrementalRenderPropertyTest {

    @Provide
    Arbitrary<List<ClusterEvent>> events() {
        return ClusterEventsForTests.event().list().ofMinSize(4).ofMaxSize(40);
    }

    private record Maps(Map<Cidr, io.npmagent.bpf.maps.IpcacheMap.Value> ipcache, Map<PodKey, Rendered.Endpoint> endpoints, Map<PolicyEntry, Integer> policy) {
        static Maps of(Rendered r) {
            return new Maps(new HashMap<>(r.ipcache()), new HashMap<>(r.endpoints()), new HashMap<>(r.policy()));
        }
    }

    @Provide
    Arbitrary<List<ClusterEvent>> eventsOfBothKinds() {
        return io.npmagent.dataplane.policy.ClusterPolicyArbitraries.eventsOfBothKinds();
    }

    /** As below, with ClusterNetworkPolicies (walked pods are redone whole) and Nodes among the events. */
    @Property(tries = 300)
    void anIncrementalRenderWithTiersEqualsOneFromScratch(@ForAll("eventsOfBothKinds") List<ClusterEvent> events) {
        anIncrementalRenderEqualsOneFromScratch(events);
    }

    @Property(tries = 500)
    void anIncrementalRenderEqualsOneFromScratch(@ForAll("events") List<ClusterEvent> events) {
        PolicyCompiler compiler = new PolicyCompiler(null);
        BpfModel model = new BpfModel();
        Maps before = Maps.of(model.render());
        for (ClusterEvent e : events) {
            model.apply(compiler.apply(e).delta());
            Rendered incremental = model.render();
            Maps now = Maps.of(incremental);
            Rendered.Changes changes = incremental.changes();
            Maps scratch = Maps.of(model.renderFromScratch());
            assertThat(now).as("after %s", e).isEqualTo(scratch);
            if (!changes.all()) {
                for (Cidr prefix : union(now.ipcache().keySet(), before.ipcache().keySet())) {
                    if (!java.util.Objects.equals(now.ipcache().get(prefix), before.ipcache().get(prefix))) {
                        assertThat(changes.ipcache()).as("ipcache entry %s changed", prefix).contains(prefix);
                    }
                }
                Set<PolicyEntry> differ = new HashSet<>();
                for (PolicyEntry entry : union(now.policy().keySet(), before.policy().keySet())) {
                    if (!java.util.Objects.equals(now.policy().get(entry), before.policy().get(entry))) {
                        differ.add(entry);
                    }
                }
                assertThat(changes.policy()).as("every entry that came, went or changed verdict is reported").containsAll(differ);
                for (PodKey pod : union(now.endpoints().keySet(), before.endpoints().keySet())) {
                    if (!java.util.Objects.equals(now.endpoints().get(pod), before.endpoints().get(pod))) {
                        assertThat(changes.pods()).as("endpoint of %s changed", pod).contains(pod);
                    }
                }
            }
            before = scratch;
        }
    }

    @Property(tries = 200)
    void aBatchWithTiersTakenBackAndGivenAgainRendersAsOneFromScratch(@ForAll("eventsOfBothKinds") List<ClusterEvent> events,
            @ForAll List<Boolean> takenBack) {
        aBatchTakenBackAndGivenAgainRendersAsOneFromScratch(events, takenBack);
    }

    /** A batch the backend took back (its write refused) and was given again: rendered, inverted, applied again. */
    @Property(tries = 500)
    void aBatchTakenBackAndGivenAgainRendersAsOneFromScratch(@ForAll("events") List<ClusterEvent> events,
            @ForAll List<Boolean> takenBack) {
        PolicyCompiler compiler = new PolicyCompiler("node-1");
        BpfModel model = new BpfModel();
        int i = 0;
        for (ClusterEvent e : events) {
            io.npmagent.dataplane.desired.DesiredDelta d = compiler.apply(e).delta();
            model.apply(d);
            if (i < takenBack.size() && takenBack.get(i++)) {
                model.render();
                model.apply(d.inverse());
                model.apply(d);
            }
            Maps now = Maps.of(model.render());
            assertThat(now).as("after %s", e).isEqualTo(Maps.of(model.renderFromScratch()));
        }
    }

    /**
     * A peer class can come without any identity changing: a second pod of an identity, its address
     * inside an ipBlock. A rule to any peer on a named port lists every class serving the name, so the
     * class's entry must reach the pod whose egress it governs, though no other rule of that pod names
     * the class (random clusters rarely build this; the ipBlock, on another pod, makes the atom).
     */
    @Example
    void aClassComingIntoAnAtomReachesAnEgressNamedPortToAnyPeer() {
        LabelSelector l = new LabelSelector(Map.of("app", "l"), List.of());
        LabelSelector m = new LabelSelector(Map.of("app", "m"), List.of());
        List<ClusterEvent> events = List.of(
                new ClusterEvent.NamespaceUpserted(new Namespace("ns-a", Map.of())),
                pod("l", "10.1.0.1", "node-1", "l"),
                pod("m", "10.1.0.2", "node-1", "m"),
                pod("x1", "10.1.0.5", "node-2", "x"),
                new ClusterEvent.PolicyUpserted(new NetworkPolicy("ns-a", "egress-http", l, List.of("Egress"), List.of(),
                        List.of(new NetworkPolicy.Rule(null, List.of(new NetworkPolicy.Port("TCP", NetworkPolicy.PortValue.name("http"), null)))))),
                new ClusterEvent.PolicyUpserted(new NetworkPolicy("ns-a", "ingress-block", m, List.of("Ingress"),
                        List.of(new NetworkPolicy.Rule(List.of(new NetworkPolicy.Peer(null, null, new NetworkPolicy.IpBlock("10.9.0.0/16", List.of()))),
                                List.of())), List.of())),
                pod("x2", "10.9.0.7", "node-2", "x"),
                new ClusterEvent.PodDeleted(new PodKey("ns-a", "x2")));
        PolicyCompiler compiler = new PolicyCompiler("node-1");
        BpfModel model = new BpfModel();
        for (ClusterEvent e : events) {
            model.apply(compiler.apply(e).delta());
            Rendered incremental = model.render();
            if (e instanceof ClusterEvent.PodUpserted u && u.pod().name().equals("x2")) {
                assertThat(incremental.changes().all()).as("a class came: no full render").isFalse();
            }
            assertThat(Maps.of(incremental)).as("after %s", e).isEqualTo(Maps.of(model.renderFromScratch()));
        }
    }

    private static ClusterEvent pod(String name, String ip, String node, String app) {
        return new ClusterEvent.PodUpserted(new Pod("ns-a", name, Map.of("app", app), List.of(IpAddress.parse(ip)), node, false, PodPhase.RUNNING,
                List.of(new ContainerPort("http", 8080, Protocol.TCP)), Map.of()));
    }

    private static <T> Set<T> union(Set<T> a, Set<T> b) {
        Set<T> out = new HashSet<>(a);
        out.addAll(b);
        return out;
    }
}
