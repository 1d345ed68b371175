package io.npmagent.agent.flows;

import io.npmagent.dataplane.flow.Attribution;
import io.npmagent.dataplane.flow.AttributionRefs;
import io.npmagent.dataplane.flow.DropReason;
import io.npmagent.dataplane.flow.FlowReport;
import io.npmagent.dataplane.flow.FlowVerdict;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.LabelSelector;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * A small cluster and the reports a kernel would make about it: x/a (a client) denied at y/b (a web server
 * on 80) by y/allow-web, whose one rule admits x's clients on 8080 only; a host-network pod on the node's address.
 */
public final class FlowFixtures {
    public static final IpAddress CLIENT = IpAddress.parse("10.1.0.1");
    public static final IpAddress SERVER = IpAddress.parse("10.2.0.2");
    public static final IpAddress NODE = IpAddress.parse("192.168.0.1");
    public static final Instant T0 = Instant.parse("2026-12-07T00:40:00Z");
    public static final PolicyKey ALLOW_WEB = new PolicyKey("y", "allow-web");

    private FlowFixtures() {}

    public static List<ClusterEvent> cluster() {
        NetworkPolicy allowWeb = new NetworkPolicy("y", "allow-web", LabelSelector.matchLabels(Map.of("app", "web")), List.of("Ingress"),
                List.of(new NetworkPolicy.Rule(List.of(new NetworkPolicy.Peer(LabelSelector.matchLabels(Map.of("app", "client")),
                        LabelSelector.matchLabels(Map.of(Namespace.NAME_LABEL, "x")), null)), List.of(new NetworkPolicy.Port("TCP", new NetworkPolicy.PortValue.Number(8080), null)))),
                null);
        return List.of(
                new ClusterEvent.NamespaceUpserted(new Namespace("x", Map.of(Namespace.NAME_LABEL, "x"))),
                new ClusterEvent.NamespaceUpserted(new Namespace("y", Map.of(Namespace.NAME_LABEL, "y"))),
                new ClusterEvent.PodUpserted(Pod.builder("x", "a").labels(Map.of("app", "client")).ip(CLIENT).build()),
                new ClusterEvent.PodUpserted(Pod.builder("y", "b").labels(Map.of("app", "web")).ip(SERVER).port("http", 80, Protocol.TCP).build()),
                new ClusterEvent.PodUpserted(Pod.builder("y", "h").hostNetwork(true).ip(NODE).build()),
                new ClusterEvent.PolicyUpserted(allowWeb));
    }

    /** The kernel's report of x/a's SYNs to y/b:80, denied for ingress by y/allow-web's isolation. */
    public static FlowReport deniedIngress(AttributionRefs refs, long packets, long secondsAfter) {
        int ref = refs.ref(new Attribution.Isolation(Direction.INGRESS, List.of(ALLOW_WEB)));
        return new FlowReport(T0, T0.plusSeconds(secondsAfter), FlowVerdict.DENIED, DropReason.POLICY, Direction.INGRESS, "tc", CLIENT, SERVER,
                6, 80, null, 0, packets, packets * 60, 1, ref);
    }

    /** y/b's egress to the node's address on 9100, allowed, with no attribution recorded (an eBPF NetworkPolicy allow entry's). */
    public static FlowReport allowedEgress(AttributionRefs refs, long secondsAfter) {
        int ref = AttributionRefs.NONE;
        return new FlowReport(T0, T0.plusSeconds(secondsAfter), FlowVerdict.ALLOWED, null, Direction.EGRESS, "tc", SERVER, NODE,
                6, 9100, null, 0, 1, 60, 2, ref);
    }
}
