package io.npmagent.dataplane.eval;

import io.npmagent.dataplane.desired.CompiledRule;
import io.npmagent.dataplane.model.ClusterNetworkPolicy;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.Node;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.model.Tier;
import io.npmagent.dataplane.policy.NormalizedPolicy;
import io.npmagent.dataplane.policy.PolicyNormalizer;
import io.npmagent.dataplane.tier.ClusterPeer;
import io.npmagent.dataplane.tier.ClusterPolicyNormalizer;
import io.npmagent.dataplane.tier.ClusterPort;
import io.npmagent.dataplane.tier.ClusterRule;
import io.npmagent.dataplane.tier.NormalizedClusterPolicy;
import io.npmagent.dataplane.tier.RuleAction;
import io.npmagent.dataplane.tier.TierOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * NetworkPolicy and ClusterNetworkPolicy semantics written as plainly as possible: the reference every
 * backend is tested against. It looks at the whole cluster for every question and keeps no derived
 * state, so it is slow and obviously right. Defaulting and validation come from {@link PolicyNormalizer}
 * and {@link ClusterPolicyNormalizer}; everything after that (which pods a policy selects, which peers and
 * ports a rule admits) is decided here, apart from the compiler, so the two can check each other.
 *
 * <p>Each side of a connection is judged on its own: egress at the source pod, ingress at the
 * destination pod, and both must allow. Replies of an allowed connection are part of it and are not
 * judged again. A side walks the tiers in order, and the first final decision wins:
 * <ol>
 *   <li><b>Admin</b> (ClusterNetworkPolicy {@code tier: Admin}): the policies whose subject selects the
 *       pod, in {@link TierOrder} (lower {@code priority} first; equal priorities by name, since the API
 *       leaves that order undefined and a verdict must not depend on chance), each one's rules for the
 *       direction in the order written. The first rule that matches decides: {@code Accept} allows,
 *       {@code Deny} drops, {@code Pass} skips the rest of the tier and goes on to NetworkPolicy.</li>
 *   <li><b>NetworkPolicy</b> (networking.k8s.io/v1): when a policy of the pod's namespace selects it and
 *       isolates the direction, the connection is allowed when any rule of any such policy admits it (the
 *       union), else dropped. Either way that is final: Baseline only sees pods NetworkPolicy leaves
 *       alone.</li>
 *   <li><b>Baseline</b> ({@code tier: Baseline}): as Admin; a {@code Pass} here goes on to the default.</li>
 *   <li>The default: allow.</li>
 * </ol>
 * A ClusterNetworkPolicy rule matches when a peer matches the other end and a protocol entry matches the
 * destination port ({@code protocols} absent: every one). {@code namespaces} and {@code pods} peers match
 * pods (live, on the pod network) by labels; {@code networks} match addresses, pods' included;
 * {@code nodes} match the addresses of the matching Node objects. A NetworkPolicy rule admits when a peer
 * matches and a port matches; selector peers match pods by labels, ipBlocks by address. Named ports (in
 * either API) resolve on the destination pod, for the connection's protocol.
 *
 * <p>Ends are identified by address: see {@link Endpoint}. Terminal and host-network pods are not pod
 * endpoints: their traffic is judged by address only, no policy selects them as its subject, and no
 * selector peer matches them.
 */
public final class ReferenceEvaluator {
    private final ClusterState cluster;
    private final List<NormalizedPolicy> policies = new ArrayList<>();
    private final List<NormalizedClusterPolicy> admin;
    private final List<NormalizedClusterPolicy> baseline;

    public ReferenceEvaluator(ClusterState cluster) {
        this.cluster = cluster;
        for (NetworkPolicy p : cluster.policies().values()) {
            policies.add(PolicyNormalizer.normalize(p));
        }
        List<NormalizedClusterPolicy> clusterPolicies = new ArrayList<>();
        for (ClusterNetworkPolicy p : cluster.clusterPolicies().values()) {
            clusterPolicies.add(ClusterPolicyNormalizer.normalize(p));
        }
        admin = TierOrder.inTier(Tier.ADMIN, clusterPolicies);
        baseline = TierOrder.inTier(Tier.BASELINE, clusterPolicies);
    }

    public Verdict allowed(Endpoint source, Endpoint destination, int port, Protocol protocol) {
        checkEndpoint(source);
        checkEndpoint(destination);
        Pod src = podAt(source.ip()).orElse(null);
        Pod dst = podAt(destination.ip()).orElse(null);
        Verdict.Side egress = side(Direction.EGRESS, src, dst, destination.ip(), dst, port, protocol);
        Verdict.Side ingress = side(Direction.INGRESS, dst, src, source.ip(), dst, port, protocol);
        return new Verdict(source, destination, port, protocol.name(), egress, ingress);
    }

    /**
     * Pod to pod over one address family: IPv4 unless {@code ipv6}. Throws if either pod has no address
     * of that family (a pod without an address cannot be reached yet).
     */
    public Verdict allowed(PodKey source, PodKey destination, boolean ipv6, int port, Protocol protocol) {
        return allowed(
                Endpoint.pod(source, addressOf(source, ipv6)),
                Endpoint.pod(destination, addressOf(destination, ipv6)),
                port,
                protocol);
    }

    private IpAddress addressOf(PodKey key, boolean ipv6) {
        Pod pod = cluster.pod(key).orElseThrow(() -> new IllegalArgumentException("no pod " + key));
        return (ipv6 ? pod.ipv6() : pod.ipv4()).orElseThrow(
                () -> new IllegalArgumentException("pod " + key + " has no " + (ipv6 ? "IPv6" : "IPv4") + " address"));
    }

    private void checkEndpoint(Endpoint e) {
        if (e instanceof Endpoint.PodEndpoint p) {
            Pod pod = cluster.pod(p.pod()).orElseThrow(() -> new IllegalArgumentException("no pod " + p.pod()));
            if (!pod.ips().contains(p.ip())) {
                throw new IllegalArgumentException("pod " + p.pod() + " does not have address " + p.ip());
            }
        }
    }

    /** The pod that owns an address: of the live pod-network pods listing it, the least by namespace/name. */
    private Optional<Pod> podAt(IpAddress ip) {
        for (Pod pod : cluster.pods().values()) { // sorted by namespace/name
            if (pod.policyEndpoint() && pod.ips().contains(ip)) {
                return Optional.of(pod);
            }
        }
        return Optional.empty();
    }

    /**
     * One side, the tiers walked in order.
     *
     * @param target      the pod whose policies decide this side (null: not a pod endpoint)
     * @param peer        the pod at the other end, or null
     * @param peerIp      the other end's address
     * @param destination the pod the connection is to (for named ports), or null
     */
    private Verdict.Side side(
            Direction direction, Pod target, Pod peer, IpAddress peerIp, Pod destination, int port, Protocol protocol) {
        List<PolicyKey> isolatedBy = new ArrayList<>();
        List<RuleRef> allowedBy = new ArrayList<>();
        List<ClusterRuleRef> passedBy = new ArrayList<>();
        if (target == null) {
            return new Verdict.Side(direction, null, isolatedBy, allowedBy, passedBy, new Decision.ByDefault());
        }
        networkPolicies(direction, target, peer, peerIp, destination, port, protocol, isolatedBy, allowedBy);
        Decision decision = clusterTier(Tier.ADMIN, admin, direction, target, peer, peerIp, destination, port, protocol, passedBy);
        if (decision == null && !isolatedBy.isEmpty()) {
            decision = new Decision.ByNetworkPolicy(!allowedBy.isEmpty());
        }
        if (decision == null) {
            decision = clusterTier(Tier.BASELINE, baseline, direction, target, peer, peerIp, destination, port, protocol, passedBy);
        }
        if (decision == null) {
            decision = new Decision.ByDefault();
        }
        return new Verdict.Side(direction, target.key(), isolatedBy, allowedBy, passedBy, decision);
    }

    /**
     * One ClusterNetworkPolicy tier: the first Accept or Deny decides; null when the tier does not decide,
     * because no rule matches or a Pass rule did (which is then added to {@code passedBy}).
     */
    private Decision clusterTier(
            Tier tier, List<NormalizedClusterPolicy> policies, Direction direction, Pod target, Pod peer, IpAddress peerIp,
            Pod destination, int port, Protocol protocol, List<ClusterRuleRef> passedBy) {
        for (NormalizedClusterPolicy policy : policies) {
            if (!policy.subject().selects(target, cluster.namespace(target.namespace()))) {
                continue;
            }
            for (ClusterRule rule : policy.rules(direction)) {
                if (!clusterPeerMatches(rule, peer, peerIp) || !clusterPortMatches(rule, destination, port, protocol)) {
                    continue;
                }
                ClusterRuleRef ref = new ClusterRuleRef(tier, policy.name(), direction, rule.index(), rule.name());
                if (rule.action() == RuleAction.PASS) {
                    passedBy.add(ref);
                    return null;
                }
                return new Decision.ByClusterRule(ref, rule.action(), rule.failedClosed());
            }
        }
        return null;
    }

    private boolean clusterPeerMatches(ClusterRule rule, Pod peer, IpAddress peerIp) {
        if (rule.anyPeer()) {
            return true;
        }
        for (ClusterPeer p : rule.peers()) {
            if (p instanceof ClusterPeer.Pods pods) {
                if (peer != null
                        && pods.namespaceSelector().matches(cluster.namespace(peer.namespace()).labels())
                        && pods.podSelector().matches(peer.labels())) {
                    return true;
                }
            } else if (p instanceof ClusterPeer.Network network) {
                if (network.cidr().contains(peerIp)) {
                    return true;
                }
            } else if (p instanceof ClusterPeer.Nodes nodes) {
                for (Node node : cluster.nodes().values()) {
                    if (nodes.nodeSelector().matches(node.labels()) && node.addresses().contains(peerIp)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    private static boolean clusterPortMatches(ClusterRule rule, Pod destination, int port, Protocol protocol) {
        if (rule.anyPort()) {
            return true;
        }
        for (ClusterPort p : rule.ports()) {
            if (p instanceof ClusterPort.Range r) {
                if (r.protocol() == protocol && port >= r.first() && port <= r.last()) {
                    return true;
                }
            } else if (p instanceof ClusterPort.Named n && destination != null) {
                if (destination.namedPort(n.name(), protocol).filter(number -> number == port).isPresent()) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The NetworkPolicies that isolate {@code target} for the direction, and their rules that admit the connection. */
    private void networkPolicies(
            Direction direction, Pod target, Pod peer, IpAddress peerIp, Pod destination, int port, Protocol protocol,
            List<PolicyKey> isolatedBy, List<RuleRef> allowedBy) {
        for (NormalizedPolicy policy : policies) {
            if (!policy.namespace().equals(target.namespace())
                    || !policy.compiled().isolates(direction)
                    || !policy.podSelector().matches(target.labels())) {
                continue;
            }
            isolatedBy.add(policy.key());
            for (CompiledRule rule : policy.compiled().rules(direction)) {
                if (peerMatches(rule, peer, peerIp) && portMatches(rule, destination, port, protocol)) {
                    allowedBy.add(new RuleRef(policy.key(), direction, rule.index()));
                }
            }
        }
    }

    private boolean peerMatches(CompiledRule rule, Pod peer, IpAddress peerIp) {
        return RuleMatching.peerMatches(rule, peer, peerIp, cluster::namespace);
    }

    private static boolean portMatches(CompiledRule rule, Pod destination, int port, Protocol protocol) {
        return RuleMatching.portMatches(rule, destination, port, protocol);
    }
}
