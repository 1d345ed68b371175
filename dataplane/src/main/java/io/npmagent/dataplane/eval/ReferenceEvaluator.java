package io.npmagent.dataplane.eval;

import io.npmagent.dataplane.desired.CompiledRule;
import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.desired.PortMatch;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.policy.NormalizedPolicy;
import io.npmagent.dataplane.policy.PolicyNormalizer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * NetworkPolicy semantics written as plainly as possible: the reference every backend is tested
 * against. It looks at the whole cluster for every question and keeps no derived state, so it is slow
 * and obviously right. Defaulting and validation come from {@link PolicyNormalizer}; everything after
 * that (which pods a policy selects, which peers and ports a rule admits) is decided here, apart from
 * the compiler, so the two can check each other.
 *
 * <p>The rules, from the v1 API:
 * <ul>
 *   <li>A pod is isolated for a direction when a policy of its namespace selects it and isolates that
 *       direction; a connection is then allowed in that direction when any rule of any such policy
 *       admits it (the union). Egress is decided at the source, ingress at the destination; both must
 *       allow. Replies of an allowed connection are part of it and are not judged again.</li>
 *   <li>A rule admits a connection when one of its peers matches the other end and one of its ports
 *       matches the destination port and protocol; an absent list matches everything.</li>
 *   <li>Selector peers match pods (live, on the pod network) by labels; ipBlock peers match addresses,
 *       pods' included. Named ports resolve on the destination pod, for its protocol.</li>
 *   <li>Ends are identified by address: see {@link Endpoint}. Terminal and host-network pods are not
 *       pod endpoints: their traffic is judged by address only and no policy isolates them.</li>
 * </ul>
 */
public final class ReferenceEvaluator {
    private final ClusterState cluster;
    private final List<NormalizedPolicy> policies = new ArrayList<>();

    public ReferenceEvaluator(ClusterState cluster) {
        this.cluster = cluster;
        for (NetworkPolicy p : cluster.policies().values()) {
            policies.add(PolicyNormalizer.normalize(p));
        }
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

    private Verdict.Side side(
            Direction direction, Pod target, Pod peer, IpAddress peerIp, Pod destination, int port, Protocol protocol) {
        List<PolicyKey> isolatedBy = new ArrayList<>();
        List<RuleRef> allowedBy = new ArrayList<>();
        if (target == null) {
            return new Verdict.Side(direction, null, isolatedBy, allowedBy);
        }
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
        return new Verdict.Side(direction, target.key(), isolatedBy, allowedBy);
    }

    private boolean peerMatches(CompiledRule rule, Pod peer, IpAddress peerIp) {
        if (rule.anyPeer()) {
            return true;
        }
        for (PeerSetKey key : rule.peers()) {
            if (key instanceof PeerSetKey.CidrPeers cidr) {
                if (cidr.contains(peerIp)) {
                    return true;
                }
            } else if (key instanceof PeerSetKey.SelectorPeers sel && peer != null) {
                boolean namespaceMatches = sel.namespace() != null
                        ? sel.namespace().equals(peer.namespace())
                        : sel.namespaceSelector().matches(cluster.namespace(peer.namespace()).labels());
                if (namespaceMatches && sel.podSelector().matches(peer.labels())) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean portMatches(CompiledRule rule, Pod destination, int port, Protocol protocol) {
        if (rule.anyPort()) {
            return true;
        }
        for (PortMatch m : rule.ports()) {
            if (m instanceof PortMatch.PortRange r) {
                if (r.protocol() == protocol && port >= r.first() && port <= r.last()) {
                    return true;
                }
            } else if (m instanceof PortMatch.NamedPort n && n.protocol() == protocol && destination != null) {
                if (destination.namedPort(n.name(), protocol).filter(p -> p == port).isPresent()) {
                    return true;
                }
            }
        }
        return false;
    }
}
