package io.npmagent.dataplane.model;

import java.util.List;
import java.util.Objects;

/**
 * A policy.networking.k8s.io/v1beta1 ClusterNetworkPolicy (network-policy-api v0.3.0) exactly as
 * written: cluster-scoped, nothing defaulted or validated, strings where the API has enums. As with
 * {@link NetworkPolicy}, absent is null and kept apart from empty ({@code protocols} absent matches
 * every protocol, {@code protocols: []} is invalid). {@code io.npmagent.dataplane.tier.ClusterPolicyNormalizer}
 * validates it and produces the effective policy.
 *
 * <p>Ingress and egress rules share one shape: an ingress rule's {@code from} and an egress rule's
 * {@code to} are both {@link Rule#peers}, and a {@link Peer} has every field either kind may have.
 * The fields the API gives only to egress peers ({@code nodes}, {@code networks}, {@code domainNames})
 * are an error in an ingress rule.
 *
 * @param tier     {@code Admin} or {@code Baseline}; anything else is invalid
 * @param priority 0 to 1000, lower first; null when absent (invalid: it is required)
 * @param subject  the pods the policy applies to; null when absent (invalid)
 * @param ingress  null or empty: no ingress rules
 * @param egress   null or empty: no egress rules
 */
public record ClusterNetworkPolicy(
        String name,
        String tier,
        Integer priority,
        Subject subject,
        List<Rule> ingress,
        List<Rule> egress) {

    public ClusterNetworkPolicy {
        Objects.requireNonNull(name, "name");
        ingress = NetworkPolicy.copy(ingress);
        egress = NetworkPolicy.copy(egress);
    }

    public List<Rule> rules(Direction direction) {
        return direction == Direction.INGRESS ? ingress : egress;
    }

    /**
     * ClusterNetworkPolicySubject: exactly one of {@code namespaces} (every pod of the namespaces the
     * selector matches) and {@code pods}.
     */
    public record Subject(LabelSelector namespaces, NamespacedPods pods) {}

    /**
     * NamespacedPod: pods chosen by {@code podSelector} in the namespaces {@code namespaceSelector}
     * matches. {@code namespaceSelector} null is the empty selector (every namespace), as the API has
     * it; {@code podSelector} is required, so null is invalid.
     */
    public record NamespacedPods(LabelSelector namespaceSelector, LabelSelector podSelector) {}

    /**
     * An ingress or egress rule.
     *
     * @param name      optional, for people and attribution; at most 100 characters
     * @param action    {@code Accept}, {@code Deny} or {@code Pass}
     * @param peers     {@code from} (ingress) or {@code to} (egress): 1 to 25 peers, required
     * @param protocols null matches every protocol and port; else 1 to 25 entries, any of which may match
     */
    public record Rule(String name, String action, List<Peer> peers, List<ProtocolMatch> protocols) {
        public Rule {
            peers = NetworkPolicy.copy(peers);
            protocols = NetworkPolicy.copy(protocols);
        }
    }

    /**
     * ClusterNetworkPolicyIngressPeer / EgressPeer: exactly one field must be set. A peer with none set
     * is what an object written against a newer API (a peer kind this model does not know) looks like.
     *
     * @param namespaces  every pod of the matching namespaces
     * @param pods        pods by namespace and pod selector
     * @param nodes       egress only (experimental): the addresses of the nodes the selector matches
     * @param networks    egress only: 1 to 25 CIDRs, canonical (no host bits), matching pod addresses too
     * @param domainNames egress only (experimental): not supported by this agent, always an error
     */
    public record Peer(
            LabelSelector namespaces,
            NamespacedPods pods,
            LabelSelector nodes,
            List<String> networks,
            List<String> domainNames) {

        public Peer {
            networks = NetworkPolicy.copy(networks);
            domainNames = NetworkPolicy.copy(domainNames);
        }
    }

    /**
     * ClusterNetworkPolicyProtocol: exactly one of {@code tcp}, {@code udp}, {@code sctp} and
     * {@code destinationNamedPort} (experimental: a container port name, resolved on the destination
     * pod). An empty name is absent, as the API's {@code omitempty} has it.
     */
    public record ProtocolMatch(TransportMatch tcp, TransportMatch udp, TransportMatch sctp, String destinationNamedPort) {}

    /**
     * The body of {@code tcp}, {@code udp} or {@code sctp}: its only field, {@code destinationPort}, must
     * be set (the API's MinProperties=1), so a null one stands for {@code tcp: {}}, which is invalid.
     */
    public record TransportMatch(Port destinationPort) {}

    /** Port: exactly one of {@code number} (1-65535) and {@code range}. */
    public record Port(Integer number, PortRange range) {}

    /** PortRange: {@code start} and {@code end} (1-65535, both required), {@code start < end}; inclusive. */
    public record PortRange(Integer start, Integer end) {}
}
