package io.npmagent.dataplane.model;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * A networking.k8s.io/v1 NetworkPolicy exactly as written: the whole spec, nothing defaulted or
 * validated. Absent lists are null (the difference matters: {@code egress} absent and {@code egress: []}
 * both mean "no egress rules", but only a present {@code policyTypes} overrides the defaulting).
 * {@code io.npmagent.dataplane.policy.PolicyNormalizer} validates it and produces the effective policy.
 *
 * @param podSelector  null means the empty selector (all pods in the namespace), as in the API
 * @param policyTypes  null or empty: defaulted from the rules
 * @param ingress      null or empty: no ingress rules
 * @param egress       null or empty: no egress rules
 */
public record NetworkPolicy(
        String namespace,
        String name,
        LabelSelector podSelector,
        List<String> policyTypes,
        List<Rule> ingress,
        List<Rule> egress) {

    public NetworkPolicy {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(name, "name");
        policyTypes = copy(policyTypes);
        ingress = copy(ingress);
        egress = copy(egress);
    }

    /**
     * An unmodifiable copy that keeps null (absent) and null elements: {@code ingress: [null]} is a
     * valid manifest (a rule with every field absent), and the normalizer, not the model, decides what
     * each means.
     */
    static <T> List<T> copy(List<T> list) {
        return list == null ? null : Collections.unmodifiableList(new ArrayList<>(list));
    }

    public PolicyKey key() {
        return new PolicyKey(namespace, name);
    }

    /**
     * An ingress or egress rule. {@code peers} is {@code from} or {@code to}; null or empty admits every
     * peer. {@code ports} null or empty admits every port and protocol.
     */
    public record Rule(List<Peer> peers, List<Port> ports) {
        public Rule {
            peers = copy(peers);
            ports = copy(ports);
        }
    }

    /** NetworkPolicyPeer: selectors, or an ipBlock. Each field may be null. */
    public record Peer(LabelSelector podSelector, LabelSelector namespaceSelector, IpBlock ipBlock) {}

    /** IPBlock: a CIDR and the CIDRs carved out of it, as strings (validated later). */
    public record IpBlock(String cidr, List<String> except) {
        public IpBlock {
            except = except == null ? List.of() : copy(except);
        }
    }

    /**
     * NetworkPolicyPort. {@code protocol} null means TCP; {@code port} null means every port of the
     * protocol; {@code endPort} null means a single port.
     */
    public record Port(String protocol, PortValue port, Integer endPort) {}

    /** The IntOrString of {@code ports[].port}. */
    public sealed interface PortValue {
        static PortValue number(int n) {
            return new Number(n);
        }

        static PortValue name(String name) {
            return new Name(name);
        }

        record Number(int value) implements PortValue {
            @Override
            public String toString() {
                return Integer.toString(value);
            }
        }

        record Name(String value) implements PortValue {
            @Override
            public String toString() {
                return value;
            }
        }
    }
}
