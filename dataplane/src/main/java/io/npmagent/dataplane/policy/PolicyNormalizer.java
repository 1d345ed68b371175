package io.npmagent.dataplane.policy;

import io.npmagent.dataplane.desired.CompiledPolicy;
import io.npmagent.dataplane.desired.CompiledRule;
import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.desired.PortMatch;
import io.npmagent.dataplane.model.ApiSyntax;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.FieldErrors;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.ObjectRef;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.model.Selector;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Turns a NetworkPolicy as written into its effective form, the one place where v1 defaulting and
 * validation are decided. The evaluator and the compiler both read only the result.
 *
 * <p><b>Defaulting.</b> {@code policyTypes} absent or empty: Ingress, plus Egress when {@code egress}
 * has at least one rule ({@code egress: []} does not make an egress policy). A port without protocol is
 * TCP; a port entry without {@code port} is every port of its protocol. A peer with only
 * {@code podSelector} selects in the policy's namespace; with {@code namespaceSelector} (alone or with
 * a {@code podSelector}) in the namespaces it matches.
 *
 * <p><b>Validation</b> follows the API server ({@code ValidateNetworkPolicySpec}): selector keys,
 * values and operators; peers with both ipBlock and a selector, or with nothing; CIDRs, an except that is
 * not a strict subset of its CIDR or of another family; protocols; ports out of 1-65535; named ports
 * that are not IANA service names; endPort without port, with a named port, below port or above 65535;
 * unknown policyTypes.
 *
 * <p><b>An invalid part fails closed.</b> A real API server rejects such objects, but a manifest
 * directory does not, and the agent must never open traffic because of a mistake. So each error is
 * reported, and the effect only ever narrows what is allowed:
 * <ul>
 *   <li>an invalid {@code podSelector} selects every pod in the namespace (it isolates them);</li>
 *   <li>an unknown {@code policyTypes} entry makes the policy isolate both directions;</li>
 *   <li>an invalid peer or port entry is dropped from its rule (an invalid except drops the whole
 *       ipBlock: dropping only the except would widen it);</li>
 *   <li>a rule left with no peers, or no ports, where it had some is dropped entirely, since an empty
 *       list would mean "everything".</li>
 * </ul>
 */
public final class PolicyNormalizer {

    private PolicyNormalizer() {}

    public static NormalizedPolicy normalize(NetworkPolicy policy) {
        FieldErrors errors = new FieldErrors(ObjectRef.of(policy.key()));
        Selector podSelector = Selector.parse(policy.podSelector(), "spec.podSelector", errors);
        if (podSelector == null) {
            podSelector = Selector.ALL;
        }
        Set<Direction> directions = directions(policy, errors);
        List<CompiledRule> ingress = rules(policy, policy.ingress(), "spec.ingress", "from", errors);
        List<CompiledRule> egress = rules(policy, policy.egress(), "spec.egress", "to", errors);
        CompiledPolicy compiled = new CompiledPolicy(
                policy.key(),
                directions,
                directions.contains(Direction.INGRESS) ? ingress : List.of(),
                directions.contains(Direction.EGRESS) ? egress : List.of());
        return new NormalizedPolicy(podSelector, compiled, errors.list());
    }

    private static Set<Direction> directions(NetworkPolicy policy, FieldErrors errors) {
        Set<Direction> directions = EnumSet.noneOf(Direction.class);
        if (policy.policyTypes() == null || policy.policyTypes().isEmpty()) {
            directions.add(Direction.INGRESS);
            if (policy.egress() != null && !policy.egress().isEmpty()) {
                directions.add(Direction.EGRESS);
            }
            return directions;
        }
        if (policy.policyTypes().size() > 2) {
            errors.add("spec.policyTypes", "may not have more than 2 entries");
        }
        for (int i = 0; i < policy.policyTypes().size(); i++) {
            String type = policy.policyTypes().get(i);
            if (Direction.INGRESS.apiName().equals(type)) {
                directions.add(Direction.INGRESS);
            } else if (Direction.EGRESS.apiName().equals(type)) {
                directions.add(Direction.EGRESS);
            } else {
                errors.add("spec.policyTypes[" + i + "]", "unsupported value " + ApiSyntax.quote(type)
                        + " (Ingress or Egress); the policy isolates both directions until it is fixed");
                return EnumSet.allOf(Direction.class);
            }
        }
        return directions;
    }

    private static List<CompiledRule> rules(
            NetworkPolicy policy, List<NetworkPolicy.Rule> rules, String field, String peersField, FieldErrors errors) {
        List<CompiledRule> out = new ArrayList<>();
        if (rules == null) {
            return out;
        }
        for (int i = 0; i < rules.size(); i++) {
            NetworkPolicy.Rule rule = rules.get(i);
            String at = field + "[" + i + "]";
            if (rule == null) {
                out.add(new CompiledRule(i, true, List.of(), true, List.of()));
                continue;
            }
            List<NetworkPolicy.Peer> rawPeers = rule.peers() == null ? List.of() : rule.peers();
            List<NetworkPolicy.Port> rawPorts = rule.ports() == null ? List.of() : rule.ports();

            Set<PeerSetKey> peers = new LinkedHashSet<>();
            for (int j = 0; j < rawPeers.size(); j++) {
                PeerSetKey peer = peer(policy, rawPeers.get(j), at + "." + peersField + "[" + j + "]", errors);
                if (peer != null) {
                    peers.add(peer);
                }
            }
            Set<PortMatch> ports = new LinkedHashSet<>();
            for (int j = 0; j < rawPorts.size(); j++) {
                PortMatch port = port(rawPorts.get(j), at + ".ports[" + j + "]", errors);
                if (port != null) {
                    ports.add(port);
                }
            }
            boolean lostAllPeers = !rawPeers.isEmpty() && peers.isEmpty();
            boolean lostAllPorts = !rawPorts.isEmpty() && ports.isEmpty();
            if (lostAllPeers || lostAllPorts) {
                continue; // fail closed: an empty list here would admit everything
            }
            out.add(new CompiledRule(i, peers.isEmpty(), new ArrayList<>(peers), ports.isEmpty(), new ArrayList<>(ports)));
        }
        return out;
    }

    private static PeerSetKey peer(NetworkPolicy policy, NetworkPolicy.Peer peer, String at, FieldErrors errors) {
        if (peer == null) {
            errors.add(at, "must specify a peer");
            return null;
        }
        boolean hasSelector = peer.podSelector() != null || peer.namespaceSelector() != null;
        if (peer.ipBlock() != null) {
            if (hasSelector) {
                errors.add(at, "may not specify both ipBlock and another peer");
                return null;
            }
            return ipBlock(peer.ipBlock(), at + ".ipBlock", errors);
        }
        if (!hasSelector) {
            errors.add(at, "must specify a peer");
            return null;
        }
        int before = errors.count();
        Selector pods = Selector.parse(peer.podSelector(), at + ".podSelector", errors);
        if (peer.namespaceSelector() == null) {
            return errors.count() == before ? PeerSetKey.SelectorPeers.inNamespace(policy.namespace(), pods) : null;
        }
        Selector namespaces = Selector.parse(peer.namespaceSelector(), at + ".namespaceSelector", errors);
        return errors.count() == before ? PeerSetKey.SelectorPeers.acrossNamespaces(namespaces, pods) : null;
    }

    private static PeerSetKey ipBlock(NetworkPolicy.IpBlock block, String at, FieldErrors errors) {
        Cidr cidr;
        try {
            cidr = Cidr.parse(block.cidr());
        } catch (IllegalArgumentException e) {
            errors.add(at + ".cidr", block.cidr() == null ? "required" : e.getMessage());
            return null;
        }
        List<Cidr> except = new ArrayList<>();
        boolean ok = true;
        for (int k = 0; k < block.except().size(); k++) {
            String text = block.except().get(k);
            String field = at + ".except[" + k + "]";
            try {
                Cidr e = Cidr.parse(text);
                if (e.v6() != cidr.v6()) {
                    errors.add(field, ApiSyntax.quote(text) + " is not of the same IP family as cidr " + cidr);
                    ok = false;
                } else if (!cidr.contains(e) || e.prefixLength() == cidr.prefixLength()) {
                    errors.add(field, ApiSyntax.quote(text) + " must be a strict subset of cidr " + cidr);
                    ok = false;
                } else {
                    except.add(e);
                }
            } catch (IllegalArgumentException e) {
                errors.add(field, e.getMessage());
                ok = false;
            }
        }
        return ok ? new PeerSetKey.CidrPeers(cidr, except) : null;
    }

    private static PortMatch port(NetworkPolicy.Port port, String at, FieldErrors errors) {
        if (port == null) {
            return PortMatch.PortRange.all(Protocol.TCP);
        }
        int before = errors.count();
        Protocol protocol = Protocol.TCP;
        if (port.protocol() != null) {
            try {
                protocol = Protocol.parse(port.protocol());
            } catch (IllegalArgumentException e) {
                errors.add(at + ".protocol", "unsupported value " + ApiSyntax.quote(port.protocol()) + " (TCP, UDP or SCTP)");
            }
        }
        Integer endPort = port.endPort();
        if (port.port() == null) {
            if (endPort != null) {
                errors.add(at + ".endPort", "may not be set when port is not specified");
            }
            return errors.count() == before ? PortMatch.PortRange.all(protocol) : null;
        }
        if (port.port() instanceof NetworkPolicy.PortValue.Name name) {
            String problem = ApiSyntax.portNameProblem(name.value());
            if (problem != null) {
                errors.add(at + ".port", problem);
            }
            if (endPort != null) {
                errors.add(at + ".endPort", "may not be set when port is a named port");
            }
            return errors.count() == before ? new PortMatch.NamedPort(protocol, name.value()) : null;
        }
        int number = ((NetworkPolicy.PortValue.Number) port.port()).value();
        if (number < 1 || number > 65535) {
            errors.add(at + ".port", "port " + number + " must be between 1 and 65535, inclusive");
        }
        int last = number;
        if (endPort != null) {
            if (endPort > 65535) {
                errors.add(at + ".endPort", "endPort " + endPort + " must be between 1 and 65535, inclusive");
            } else if (endPort < number) {
                errors.add(at + ".endPort", "endPort " + endPort + " must be greater than or equal to port " + number);
            }
            last = endPort;
        }
        return errors.count() == before ? new PortMatch.PortRange(protocol, number, last) : null;
    }
}
