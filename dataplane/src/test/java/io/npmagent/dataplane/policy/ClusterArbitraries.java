package io.npmagent.dataplane.policy;

import io.npmagent.dataplane.bandwidth.BandwidthAnnotations;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ContainerPort;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.LabelSelector;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PodPhase;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/**
 * Random clusters that are small but dense in the cases that matter: a few label keys and values so
 * selectors often match, an address pool so ipBlocks cover pods and two pods sometimes share an address,
 * a named port that means different numbers on different pods, host-network, terminal and address-less
 * pods, pods on two nodes, and now and then an invalid policy element (which must fail closed).
 */
final class ClusterArbitraries {
    static final List<String> NAMESPACES = List.of("ns-a", "ns-b", "ns-c");
    static final List<String> NODES = List.of("node-1", "node-2");
    static final List<String> POD_NAMES = List.of("p0", "p1", "p2", "p3", "p4");
    static final List<String> POLICY_NAMES = List.of("pol0", "pol1", "pol2");
    static final List<String> V4_POOL = List.of("10.0.0.1", "10.0.0.2", "10.0.0.5", "10.0.0.9", "10.0.0.14", "10.0.1.3", "10.0.0.2");
    static final List<String> V6_POOL = List.of("fd00::1", "fd00::2", "fd00::5", "fd00::1:9");
    /** Addresses no pod ever has: the outside world, some inside the CIDRs the policies use. */
    static final List<String> EXTERNAL = List.of("10.0.0.200", "192.168.7.7", "fd00::99", "2001:db8::7");
    static final List<Integer> PROBE_PORTS = List.of(53, 80, 81, 8080, 9090);

    private static final List<String> POD_LABEL_KEYS = List.of("app", "tier");
    private static final List<String> NS_LABEL_KEYS = List.of("team", "env");
    private static final List<String> VALUES = List.of("x", "y", "z");
    private static final List<ContainerPort> PORTS = List.of(
            new ContainerPort("http", 80, Protocol.TCP),
            new ContainerPort("http", 8080, Protocol.TCP),
            new ContainerPort("dns", 53, Protocol.UDP),
            new ContainerPort("dns", 53, Protocol.TCP),
            new ContainerPort("metrics", 9090, Protocol.TCP),
            new ContainerPort("sc", 80, Protocol.SCTP),
            new ContainerPort(null, 81, Protocol.TCP));
    private static final List<String> CIDRS =
            List.of("10.0.0.0/24", "10.0.0.0/29", "10.0.0.8/29", "0.0.0.0/0", "10.0.0.0/8", "fd00::/64", "fd00::/126", "::/0");
    private static final List<String> EXCEPTS =
            List.of("10.0.0.4/30", "10.0.0.1/32", "10.0.0.0/25", "10.0.0.14/31", "fd00::4/126", "fd00::1/128", "10.9.0.0/16");

    private ClusterArbitraries() {}

    static Arbitrary<List<ClusterEvent>> events() {
        return event().list().ofMinSize(4).ofMaxSize(40);
    }

    static Arbitrary<ClusterEvent> event() {
        return Arbitraries.frequencyOf(
                Tuple.of(3, namespace().map(ClusterEvent.NamespaceUpserted::new)),
                Tuple.of(1, Arbitraries.of(NAMESPACES).map(ClusterEvent.NamespaceDeleted::new)),
                Tuple.of(8, pod().map(ClusterEvent.PodUpserted::new)),
                Tuple.of(2, podKey().map(ClusterEvent.PodDeleted::new)),
                Tuple.of(8, policy().map(ClusterEvent.PolicyUpserted::new)),
                Tuple.of(1, policyKey().map(ClusterEvent.PolicyDeleted::new)));
    }

    static Arbitrary<PodKey> podKey() {
        return Combinators.combine(Arbitraries.of(NAMESPACES), Arbitraries.of(POD_NAMES)).as(PodKey::new);
    }

    static Arbitrary<PolicyKey> policyKey() {
        return Combinators.combine(Arbitraries.of(NAMESPACES), Arbitraries.of(POLICY_NAMES)).as(PolicyKey::new);
    }

    static Arbitrary<Namespace> namespace() {
        return Combinators.combine(Arbitraries.of(NAMESPACES), labels(NS_LABEL_KEYS)).as(Namespace::new);
    }

    static Arbitrary<Map<String, String>> labels(List<String> keys) {
        return Arbitraries.maps(Arbitraries.of(keys), Arbitraries.of(VALUES)).ofMaxSize(keys.size());
    }

    static Arbitrary<Pod> pod() {
        Arbitrary<List<IpAddress>> ips = Combinators.combine(
                        Arbitraries.of(V4_POOL).injectNull(0.25),
                        Arbitraries.of(V6_POOL).injectNull(0.6))
                .as((v4, v6) -> {
                    List<IpAddress> out = new ArrayList<>();
                    if (v4 != null) {
                        out.add(IpAddress.parse(v4));
                    }
                    if (v6 != null) {
                        out.add(IpAddress.parse(v6));
                    }
                    return out;
                });
        Arbitrary<PodPhase> phase = Arbitraries.frequencyOf(
                Tuple.of(12, Arbitraries.just(PodPhase.RUNNING)),
                Tuple.of(2, Arbitraries.just(PodPhase.PENDING)),
                Tuple.of(1, Arbitraries.of(PodPhase.SUCCEEDED, PodPhase.FAILED)));
        Arbitrary<List<ContainerPort>> ports = Arbitraries.of(PORTS).list().ofMaxSize(3);
        // Rate limits (and a value no limit can be read from) ride on pods' rows: changing one is a pod change.
        Arbitrary<Map<String, String>> bandwidth = Arbitraries.frequencyOf(
                Tuple.of(4, Arbitraries.just(Map.<String, String>of())),
                Tuple.of(1, Arbitraries.of("10M", "1G", "fast").map(v -> Map.of(BandwidthAnnotations.EGRESS, v))),
                Tuple.of(1, Arbitraries.of("5M", "2Gi").map(v -> Map.of(BandwidthAnnotations.INGRESS, v))));
        return Combinators.combine(
                        podKey(),
                        labels(POD_LABEL_KEYS),
                        ips,
                        Arbitraries.of(NODES),
                        Arbitraries.integers().between(0, 11).map(i -> i == 0),
                        phase,
                        ports,
                        bandwidth)
                .as((key, labels, addrs, node, hostNetwork, ph, ps, annotations) -> Pod.builder(key.namespace(), key.name())
                        .labels(labels)
                        .ips(addrs)
                        .nodeName(node)
                        .hostNetwork(hostNetwork)
                        .phase(ph)
                        .ports(ps)
                        .annotations(annotations)
                        .build());
    }

    static Arbitrary<LabelSelector> selector(List<String> keys) {
        Arbitrary<LabelSelector.Requirement> requirement = Combinators.combine(
                        Arbitraries.of(keys),
                        Arbitraries.frequencyOf(
                                Tuple.of(5, Arbitraries.of("In", "NotIn", "Exists", "DoesNotExist")),
                                Tuple.of(1, Arbitraries.just("Sometimes"))),
                        Arbitraries.of(VALUES).list().ofMinSize(1).ofMaxSize(2))
                .as((key, op, values) -> new LabelSelector.Requirement(
                        key, op, op.equals("Exists") || op.equals("DoesNotExist") ? List.of() : values));
        return Combinators.combine(
                        Arbitraries.maps(Arbitraries.of(keys), Arbitraries.of(VALUES)).ofMaxSize(1),
                        requirement.list().ofMaxSize(2))
                .as(LabelSelector::new);
    }

    static Arbitrary<NetworkPolicy.Peer> peer() {
        Arbitrary<NetworkPolicy.Peer> pods = selector(POD_LABEL_KEYS).map(s -> new NetworkPolicy.Peer(s, null, null));
        Arbitrary<NetworkPolicy.Peer> namespaces =
                selector(NS_LABEL_KEYS).map(s -> new NetworkPolicy.Peer(null, s, null));
        Arbitrary<NetworkPolicy.Peer> both = Combinators.combine(selector(POD_LABEL_KEYS), selector(NS_LABEL_KEYS))
                .as((p, n) -> new NetworkPolicy.Peer(p, n, null));
        Arbitrary<NetworkPolicy.Peer> block = Combinators.combine(
                        Arbitraries.of(CIDRS), Arbitraries.of(EXCEPTS).list().ofMaxSize(2).uniqueElements())
                .as((cidr, except) -> new NetworkPolicy.Peer(null, null, new NetworkPolicy.IpBlock(cidr, except)));
        return Arbitraries.frequencyOf(
                Tuple.of(3, pods),
                Tuple.of(2, namespaces),
                Tuple.of(2, both),
                Tuple.of(3, block));
    }

    static Arbitrary<NetworkPolicy.Port> port() {
        Arbitrary<String> protocol = Arbitraries.frequencyOf(
                Tuple.of(4, Arbitraries.just((String) null)),
                Tuple.of(6, Arbitraries.of("TCP", "UDP", "SCTP")),
                Tuple.of(1, Arbitraries.just("ICMP")));
        Arbitrary<NetworkPolicy.Port> numbered = Combinators.combine(
                        protocol,
                        Arbitraries.of(53, 80, 81, 8080, 9090),
                        Arbitraries.of(80, 1000, 9090, 50).injectNull(0.6))
                .as((p, n, end) -> new NetworkPolicy.Port(p, NetworkPolicy.PortValue.number(n), end));
        Arbitrary<NetworkPolicy.Port> named = Combinators.combine(protocol, Arbitraries.of("http", "dns", "metrics", "sc", "nope"))
                .as((p, n) -> new NetworkPolicy.Port(p, NetworkPolicy.PortValue.name(n), null));
        Arbitrary<NetworkPolicy.Port> protocolOnly = protocol.map(p -> new NetworkPolicy.Port(p, null, null));
        return Arbitraries.frequencyOf(
                Tuple.of(4, numbered),
                Tuple.of(3, named),
                Tuple.of(1, protocolOnly));
    }

    static Arbitrary<NetworkPolicy.Rule> rule() {
        return Combinators.combine(
                        peer().list().ofMaxSize(2).injectNull(0.2),
                        port().list().ofMaxSize(2).injectNull(0.2))
                .as(NetworkPolicy.Rule::new);
    }

    static Arbitrary<NetworkPolicy> policy() {
        Arbitrary<List<String>> policyTypes = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.just((List<String>) null)),
                Tuple.of(1, Arbitraries.just(List.<String>of())),
                Tuple.of(2, Arbitraries.just(List.of("Ingress"))),
                Tuple.of(2, Arbitraries.just(List.of("Egress"))),
                Tuple.of(2, Arbitraries.just(List.of("Ingress", "Egress"))),
                Tuple.of(1, Arbitraries.just(List.of("Bogus"))));
        return Combinators.combine(
                        policyKey(),
                        selector(POD_LABEL_KEYS),
                        policyTypes,
                        rule().list().ofMaxSize(2).injectNull(0.2),
                        rule().list().ofMaxSize(2).injectNull(0.3))
                .as((key, podSelector, types, ingress, egress) ->
                        new NetworkPolicy(key.namespace(), key.name(), podSelector, types, ingress, egress));
    }
}
