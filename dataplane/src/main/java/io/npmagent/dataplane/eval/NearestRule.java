package io.npmagent.dataplane.eval;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.npmagent.dataplane.desired.CompiledRule;
import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.model.ApiSyntax;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.policy.NormalizedPolicy;
import io.npmagent.dataplane.policy.PolicyNormalizer;
import java.util.List;
import java.util.stream.Collectors;

/**
 * For a NetworkPolicy default deny ("these policies isolate the pod, no rule admits it"), the rule that came
 * closest and what it missed: a rule whose peer matches but whose ports do not (the usual mistake: a port or
 * protocol left out), else one whose port matches but whose peer does not (a label or namespace off). Rules
 * are looked at in the isolating policies' order (namespace/name) and their own; the first rule of the better
 * kind wins. Matching is the reference evaluator's ({@link RuleMatching}), so a rule called "near" here is
 * exactly one half short of admitting.
 *
 * <p>It reads the cluster as it is when asked, which for a flow is its first report, within a second of the
 * drop: a policy edited in between is read as edited (then a rule may even admit the flow, which is said).
 */
public final class NearestRule {

    /** What the finder reads of the cluster: lookups by key, cheap at 100,000 pods in an agent's index. */
    public interface Cluster {
        /** The namespace's labels as the cluster has them, or as the API server would give them. */
        Namespace namespace(String name);

        /** The live pod-network pod that owns the address, or null. */
        Pod podAt(IpAddress address);

        /** The policy as it is now, or null when it is gone. */
        NetworkPolicy policy(PolicyKey key);
    }

    private final Cluster cluster;
    /**
     * Each policy object as normalized, while the cluster holds it (weak keys: by identity, gone with the
     * object an update replaces). A pod that 1,000 policies isolate would otherwise have 1,000 policies
     * normalized, selectors parsed, at every new flow of a flood.
     */
    private final Cache<NetworkPolicy, NormalizedPolicy> normalized = Caffeine.newBuilder().weakKeys().maximumSize(100_000).build();

    public NearestRule(Cluster cluster) {
        this.cluster = cluster;
    }

    /** A snapshot's view, looking pods up by scanning (tests, one-off questions): the evaluator's ownership rule. */
    public static Cluster of(ClusterState state) {
        return new Cluster() {
            @Override
            public Namespace namespace(String name) {
                return state.namespace(name);
            }

            @Override
            public Pod podAt(IpAddress address) {
                for (Pod p : state.pods().values()) { // sorted: the least by namespace/name owns a shared address
                    if (p.policyEndpoint() && p.ips().contains(address)) {
                        return p;
                    }
                }
                return null;
            }

            @Override
            public NetworkPolicy policy(PolicyKey key) {
                return state.policies().get(key);
            }
        };
    }

    /**
     * The nearest rule, for people ({@code x/allow-web spec.ingress[0] admits the peer but not TCP/8080 (its ports: TCP/80)}),
     * or null when no rule of the isolating policies matches either half.
     *
     * @param isolating      the policies that isolate the pod in {@code direction} (the attribution's)
     * @param protocolNumber the IP protocol number; a protocol a rule cannot name (ICMP) matches only rules of every port
     * @param port           the destination port
     */
    public String nearest(Direction direction, List<PolicyKey> isolating, IpAddress source, IpAddress destination, int protocolNumber,
            int port) {
        Pod src = cluster.podAt(source);
        Pod dst = cluster.podAt(destination);
        Pod peer = direction == Direction.INGRESS ? src : dst;
        IpAddress peerIp = direction == Direction.INGRESS ? source : destination;
        Protocol protocol = protocol(protocolNumber);
        String portText = (protocol == null ? "protocol " + protocolNumber : protocol + "/" + port);
        String peerText = "the peer " + (peer == null ? peerIp.toString() : peer.key() + " (" + peerIp + ")");
        String byPort = null;
        for (PolicyKey key : isolating.stream().sorted().toList()) {
            NetworkPolicy policy = cluster.policy(key);
            if (policy == null) {
                continue;
            }
            NormalizedPolicy n = normalized.get(policy, PolicyNormalizer::normalize);
            if (!n.compiled().isolates(direction)) {
                continue;
            }
            for (CompiledRule rule : n.compiled().rules(direction)) {
                boolean peerOk = RuleMatching.peerMatches(rule, peer, peerIp, cluster::namespace);
                boolean portOk = RuleMatching.portMatches(rule, dst, port, protocol);
                String ref = new RuleRef(key, direction, rule.index()).toString();
                if (peerOk && portOk) {
                    return clean(ref + " admits it as the policy is now (it changed, or was not yet applied, when the kernel decided)");
                }
                if (peerOk) {
                    return clean(ref + " admits the peer but not " + portText + " (its ports: " + ports(rule) + ")");
                }
                if (portOk && byPort == null) {
                    byPort = clean(ref + " admits " + portText + " but not " + peerText + " (its peers: " + peers(rule) + ")");
                }
            }
        }
        return byPort;
    }

    private static String ports(CompiledRule rule) {
        return rule.anyPort() ? "any" : rule.ports().stream().map(Object::toString).collect(Collectors.joining(", "));
    }

    private static String peers(CompiledRule rule) {
        return rule.anyPeer() ? "any" : rule.peers().stream().map(PeerSetKey::describe).collect(Collectors.joining(", "));
    }

    /** Names and labels are the cluster's, untrusted: no control character reaches a terminal or an Event. */
    private static String clean(String text) {
        return ApiSyntax.escapeControls(text);
    }

    private static Protocol protocol(int number) {
        for (Protocol p : Protocol.values()) {
            if (p.ipProtocolNumber() == number) {
                return p;
            }
        }
        return null;
    }
}
