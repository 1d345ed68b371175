package io.npmagent.iptables.nft;

import static io.npmagent.dataplane.model.PolicyFixtures.allowAll;
import static io.npmagent.dataplane.model.PolicyFixtures.anyPortOf;
import static io.npmagent.dataplane.model.PolicyFixtures.block;
import static io.npmagent.dataplane.model.PolicyFixtures.labels;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static io.npmagent.dataplane.model.PolicyFixtures.named;
import static io.npmagent.dataplane.model.PolicyFixtures.namespaces;
import static io.npmagent.dataplane.model.PolicyFixtures.peers;
import static io.npmagent.dataplane.model.PolicyFixtures.pods;
import static io.npmagent.dataplane.model.PolicyFixtures.policy;
import static io.npmagent.dataplane.model.PolicyFixtures.port;
import static io.npmagent.dataplane.model.PolicyFixtures.ports;
import static io.npmagent.dataplane.model.PolicyFixtures.range;
import static io.npmagent.dataplane.model.PolicyFixtures.rule;

import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.desired.Change;
import io.npmagent.dataplane.desired.CompiledPolicy;
import io.npmagent.dataplane.desired.CompiledRule;
import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.desired.DesiredState;
import io.npmagent.dataplane.desired.Identity;
import io.npmagent.dataplane.desired.IdentityId;
import io.npmagent.dataplane.desired.LocalPod;
import io.npmagent.dataplane.desired.Membership;
import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.desired.PortMatch;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.model.Selector;
import io.npmagent.dataplane.policy.PolicyCompiler;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Cluster states for the nft backend's tests: every kind of rule, and hostile object text. */
final class NftFixtures {
    private NftFixtures() {}

    /** x/web: every kind of ingress rule; x/deny-web: deny-all on web too; x/api-egress; y/open: allow all. */
    static List<ClusterEvent> cluster() {
        return List.of(
                new ClusterEvent.NamespaceUpserted(new Namespace("x", labels("team", "a"))),
                new ClusterEvent.NamespaceUpserted(new Namespace("y", labels("team", "b"))),
                new ClusterEvent.PodUpserted(Pod.builder("x", "web").labels(labels("app", "web")).ip("10.0.0.1").ip("fd00::1")
                        .port("http", 8080, Protocol.TCP).port("assoc", 9000, Protocol.SCTP).build()),
                new ClusterEvent.PodUpserted(Pod.builder("x", "api").labels(labels("app", "api")).ip("10.0.0.2").ip("fd00::2").build()),
                new ClusterEvent.PodUpserted(Pod.builder("y", "client").labels(labels("app", "client")).ip("10.0.1.1").build()),
                new ClusterEvent.PolicyUpserted(webPolicy(8000, 8100)),
                new ClusterEvent.PolicyUpserted(policy("x", "deny-web").select(match("app", "web")).types("Ingress").build()),
                new ClusterEvent.PolicyUpserted(policy("x", "api-egress").select(match("app", "api")).types("Egress")
                        .egress(rule(peers(block("0.0.0.0/0", "10.0.0.0/8")), null),
                                rule(peers(pods(match("app", "web"))), ports(named("SCTP", "assoc"))))
                        .build()),
                new ClusterEvent.PolicyUpserted(policy("y", "open").select(match("app", "client")).ingress(allowAll()).build()));
    }

    /** x/web, with the port range as a parameter so a test can edit the policy. */
    static NetworkPolicy webPolicy(int first, int last) {
        return policy("x", "web").select(match("app", "web"))
                .ingress(rule(peers(pods(match("app", "api")), namespaces(match("team", "b"))), ports(named(null, "http"))),
                        rule(peers(block("192.168.0.0/16", "192.168.1.0/24", "192.168.1.128/25"), block("::/0", "fd00::/64")),
                                ports(port("UDP", 53))),
                        rule(null, ports(range("TCP", first, last))),
                        rule(peers(pods(match("app", "api"))), ports(anyPortOf("UDP"))),
                        rule(peers(namespaces(match("team", "b"))), ports(port("SCTP", 9000))))
                .build();
    }

    /** The whole cluster compiled, as one batch (what a restarted agent's first batch holds). */
    static Batch wholeCluster() {
        PolicyCompiler compiler = new PolicyCompiler(null);
        cluster().forEach(compiler::apply);
        return new Batch(DesiredDelta.of(compiler.snapshot()));
    }

    /**
     * A delta built by hand, past the compiler's validation, as a backend must survive it: a policy and a
     * pod whose names hold quotes, newlines, {@code ;}, {@code $()}, a comment sign and unicode, and a
     * selector set whose labels are as bad, with a 63-character value.
     */
    static DesiredDelta hostile() {
        String evil = "x\"; delete table inet npm_agent; $(reboot) `id`\n# ünïcødé ☃ \\ '{}";
        String long63 = "v".repeat(63);
        // Long enough that its comment is cut at nft's 128 characters.
        PolicyKey policyKey = new PolicyKey("ns\"\n;", "pol " + evil + "n".repeat(200));
        PodKey podKey = new PodKey("ns\"\n;", "pod\n" + evil);
        IdentityId id = new IdentityId(IdentityId.FIRST);
        Identity identity = new Identity("ns\"\n;", Map.of(), Map.of("k\"$(x)", evil, "long", long63), Map.of());
        IpAddress ip = IpAddress.parse("10.0.9.1");
        PeerSetKey.SelectorPeers set = PeerSetKey.SelectorPeers.inNamespace("ns\"\n;",
                new Selector(new TreeMap<>(Map.of("k\"$(x)", evil, "long", long63)), List.of()));
        CompiledPolicy compiled = new CompiledPolicy(policyKey, EnumSet.of(Direction.INGRESS),
                List.of(new CompiledRule(0, false, List.of(set), false, List.of(PortMatch.PortRange.single(Protocol.TCP, 80)))),
                List.of());
        LocalPod pod = new LocalPod(podKey, List.of(ip), id, List.of(policyKey), List.of(), null);
        return new DesiredDelta(
                Map.of(id, new Change<>(null, identity)),
                Map.of(ip, new Change<>(null, id)),
                Map.of(set, true),
                Map.of(new Membership(set, id), true),
                Map.of(policyKey, new Change<>(null, compiled)),
                Map.of(podKey, new Change<>(null, pod)));
    }
}
