package io.npmagent.dataplane.tier;

import io.npmagent.dataplane.model.ApiSyntax;
import io.npmagent.dataplane.model.ClusterNetworkPolicy;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.FieldErrors;
import io.npmagent.dataplane.model.LabelSelector;
import io.npmagent.dataplane.model.ObjectRef;
import io.npmagent.dataplane.model.Selector;
import io.npmagent.dataplane.model.Tier;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Turns a ClusterNetworkPolicy as written into its effective form: the one place where its validation
 * is decided, and how each invalid part fails closed. The evaluator and the compiler both read only the
 * result.
 *
 * <p><b>Validation</b> mirrors the v1beta1 CRD (network-policy-api v0.3.0, experimental channel): the
 * {@code tier} enum (Admin, Baseline) and required fields ({@code tier}, {@code priority},
 * {@code subject}; a rule's {@code action} and {@code from}/{@code to}; a pod peer's
 * {@code podSelector}; a range's {@code start} and {@code end}); {@code priority} 0-1000; at most 25
 * rules per direction, 25 peers and 25 protocols per rule (at least one of each when present), 25
 * networks; rule names of at most 100 characters; exactly one field set in a subject, a peer, a
 * protocol entry and a port ({@code tcp: {}} is invalid, as MinProperties=1 makes it); ports and range
 * ends 1-65535 with {@code start < end}; networks in canonical CIDR form (no host bits), at most 43
 * characters, no duplicates; the CEL rule that an egress rule with a {@code networks}, {@code nodes} or
 * {@code domainNames} peer may not use {@code destinationNamedPort}; and ingress peers only of the
 * ingress kinds ({@code namespaces}, {@code pods}). Label selectors are checked as everywhere else
 * ({@link Selector#parse}); the CRD does not check them, so a real API server admits a selector no
 * implementation can read, and this check matters in production, not only for manifest directories.
 *
 * <p><b>Not supported:</b> {@code domainNames} peers. Matching them needs the DNS answers a pod
 * received, which this agent does not see; a {@code domainNames} peer is always an error naming its
 * field, and its rule fails closed as below, never quietly ignored.
 *
 * <p><b>An invalid part fails closed.</b> The API says how for a peer an implementation cannot read
 * (one with no field it knows, as an object written for a newer API looks): "For Accept rules, fail
 * closed means: treat the rule as matching no traffic. For Deny and Pass rules, treat the rule as a
 * 'Deny all' rule". That reading is applied to every error inside a rule:
 * <ul>
 *   <li>an invalid Accept rule matches nothing (it is left out);</li>
 *   <li>an invalid Deny or Pass rule, or a rule whose action cannot be read, denies every connection
 *       that reaches it: earlier rules and policies still decide first.</li>
 * </ul>
 * An error in the policy itself ({@code tier}, {@code priority}, {@code subject}, too many rules) leaves
 * no safe reading of where, or to whom, the rules apply, so the policy is enforced <em>deny-only</em>:
 * its Accept rules match nothing and its Pass rules deny what they match (a Pass could skip a Deny of a
 * policy after it), its Deny rules stand; a policy whose tier cannot be read is enforced in both tiers (in Admin
 * alone, an Admin Pass before it would skip its Denies, which as the Baseline policy it may have meant
 * would still deny), an unreadable priority as 0 (first), and an unreadable subject as every pod it could have
 * meant (an invalid selector in it matches everything; a subject without exactly one field, every pod).
 * Read either way, a policy never allows a connection that the policy, read any valid way, would not:
 * the evaluator's property tests check exactly that.
 */
public final class ClusterPolicyNormalizer {
    static final int MIN_PRIORITY = 0;
    static final int MAX_PRIORITY = 1000;
    static final int MAX_RULES = 25;
    static final int MAX_PEERS = 25;
    static final int MAX_PROTOCOLS = 25;
    static final int MAX_RULE_NAME = 100;

    private static final String DENY_ONLY =
            "; until it is fixed the policy only denies: its Accept rules match nothing and its Pass rules deny";

    private ClusterPolicyNormalizer() {}

    public static NormalizedClusterPolicy normalize(ClusterNetworkPolicy policy) {
        FieldErrors errors = new FieldErrors(ObjectRef.clusterNetworkPolicy(policy.name()));
        Set<Tier> tiers = tiers(policy.tier(), errors);
        int priority = priority(policy.priority(), errors);
        ClusterSubject subject = subject(policy.subject(), errors);
        ruleCount(policy.ingress(), "spec.ingress", errors);
        ruleCount(policy.egress(), "spec.egress", errors);
        boolean denyOnly = errors.count() > 0;
        List<ClusterRule> ingress = rules(policy.ingress(), Direction.INGRESS, denyOnly, errors);
        List<ClusterRule> egress = rules(policy.egress(), Direction.EGRESS, denyOnly, errors);
        return new NormalizedClusterPolicy(policy.name(), tiers, priority, subject, ingress, egress, errors.list());
    }

    private static Set<Tier> tiers(String text, FieldErrors errors) {
        Tier tier = Tier.parseClusterTier(text);
        if (tier == null) {
            errors.add("spec.tier", (text == null ? "required" : "unsupported value " + ApiSyntax.quote(text) + " (Admin or Baseline)")
                    + DENY_ONLY + ", in both tiers");
            return EnumSet.of(Tier.ADMIN, Tier.BASELINE);
        }
        return EnumSet.of(tier);
    }

    private static int priority(Integer priority, FieldErrors errors) {
        if (priority == null) {
            errors.add("spec.priority", "required" + DENY_ONLY + ", before every other policy of its tier");
            return MIN_PRIORITY;
        }
        if (priority < MIN_PRIORITY || priority > MAX_PRIORITY) {
            errors.add("spec.priority", priority + " must be between " + MIN_PRIORITY + " and " + MAX_PRIORITY + ", inclusive"
                    + DENY_ONLY + ", before every other policy of its tier");
            return MIN_PRIORITY;
        }
        return priority;
    }

    private static ClusterSubject subject(ClusterNetworkPolicy.Subject subject, FieldErrors errors) {
        if (subject == null) {
            errors.add("spec.subject", "required" + DENY_ONLY + ", for every pod");
            return ClusterSubject.EVERY_POD;
        }
        if ((subject.namespaces() == null) == (subject.pods() == null)) {
            errors.add("spec.subject", "must specify exactly one of namespaces and pods" + DENY_ONLY + ", for every pod");
            return ClusterSubject.EVERY_POD;
        }
        if (subject.namespaces() != null) {
            return new ClusterSubject(orEverything(subject.namespaces(), "spec.subject.namespaces", errors), Selector.ALL);
        }
        ClusterNetworkPolicy.NamespacedPods pods = subject.pods();
        Selector namespaces = orEverything(pods.namespaceSelector(), "spec.subject.pods.namespaceSelector", errors);
        if (pods.podSelector() == null) {
            errors.add("spec.subject.pods.podSelector", "required" + DENY_ONLY + ", for every pod of its namespaces");
            return new ClusterSubject(namespaces, Selector.ALL);
        }
        return new ClusterSubject(namespaces, orEverything(pods.podSelector(), "spec.subject.pods.podSelector", errors));
    }

    /** A subject's selector; one that cannot be read might have meant anything, so it matches everything. */
    private static Selector orEverything(LabelSelector raw, String field, FieldErrors errors) {
        Selector selector = Selector.parse(raw, field, errors);
        if (selector == null) {
            errors.add(field, "cannot be read" + DENY_ONLY + ", and this selector matches everything");
            return Selector.ALL;
        }
        return selector;
    }

    private static void ruleCount(List<ClusterNetworkPolicy.Rule> rules, String field, FieldErrors errors) {
        if (rules != null && rules.size() > MAX_RULES) {
            errors.add(field, "must have at most " + MAX_RULES + " items, has " + rules.size() + DENY_ONLY);
        }
    }

    private static List<ClusterRule> rules(
            List<ClusterNetworkPolicy.Rule> rules, Direction direction, boolean denyOnly, FieldErrors errors) {
        List<ClusterRule> out = new ArrayList<>();
        if (rules == null) {
            return out;
        }
        String field = direction == Direction.INGRESS ? "spec.ingress" : "spec.egress";
        for (int i = 0; i < rules.size(); i++) {
            ClusterRule rule = rule(rules.get(i), i, direction, field + "[" + i + "]", errors);
            if (rule == null) {
                continue; // an Accept rule that matches nothing
            }
            if (denyOnly && !rule.failedClosed()) {
                if (rule.action() == RuleAction.ACCEPT) {
                    continue;
                }
                if (rule.action() == RuleAction.PASS) {
                    rule = rule.asDeny();
                }
            }
            out.add(rule);
        }
        return out;
    }

    /** The rule as written, or failed closed if anything in it is invalid: null for an invalid Accept. */
    private static ClusterRule rule(ClusterNetworkPolicy.Rule rule, int index, Direction direction, String at, FieldErrors errors) {
        String peersField = direction == Direction.INGRESS ? "from" : "to";
        if (rule == null) {
            errors.add(at, "must specify action and " + peersField + "; fails closed: it denies every connection that reaches it");
            return ClusterRule.denyEverything(index, null);
        }
        int before = errors.count();
        RuleAction action = RuleAction.parse(rule.action());
        if (action == null) {
            errors.add(at + ".action", rule.action() == null ? "required"
                    : "unsupported value " + ApiSyntax.quote(rule.action()) + " (Accept, Deny or Pass)");
        }
        if (rule.name() != null && rule.name().length() > MAX_RULE_NAME) {
            errors.add(at + ".name", "must be no more than " + MAX_RULE_NAME + " characters");
        }
        List<ClusterPeer> peers = new ArrayList<>();
        boolean addressPeers = false;
        String peersAt = at + "." + peersField;
        if (rule.peers() == null) {
            errors.add(peersAt, "required");
        } else if (rule.peers().isEmpty() || rule.peers().size() > MAX_PEERS) {
            errors.add(peersAt, "must have between 1 and " + MAX_PEERS + " items, has " + rule.peers().size());
        }
        if (rule.peers() != null) {
            for (int j = 0; j < rule.peers().size(); j++) {
                ClusterNetworkPolicy.Peer peer = rule.peers().get(j);
                addressPeers |= peer != null && (peer.networks() != null || peer.nodes() != null || peer.domainNames() != null);
                peers.addAll(ClusterPeerReader.read(peer, direction, peersAt + "[" + j + "]", errors));
            }
        }
        List<ClusterPort> ports = new ArrayList<>();
        boolean namedPorts = false;
        if (rule.protocols() != null) {
            if (rule.protocols().isEmpty() || rule.protocols().size() > MAX_PROTOCOLS) {
                errors.add(at + ".protocols", "must have between 1 and " + MAX_PROTOCOLS + " items when present, has "
                        + rule.protocols().size());
            }
            for (int j = 0; j < rule.protocols().size(); j++) {
                ClusterPort port = ClusterPortReader.read(rule.protocols().get(j), at + ".protocols[" + j + "]", errors);
                if (port != null) {
                    ports.add(port);
                    namedPorts |= port instanceof ClusterPort.Named;
                }
            }
        }
        if (direction == Direction.EGRESS && addressPeers && namedPorts) {
            errors.add(at, "networks/nodes/domainNames peer cannot be set with namedPorts since there are no namedPorts "
                    + "for networks/nodes/domainNames");
        }
        if (errors.count() == before) {
            return new ClusterRule(index, rule.name(), action, false, peers, rule.protocols() == null, ports, false);
        }
        if (action == RuleAction.ACCEPT) {
            errors.add(at, "invalid, so it fails closed: this Accept rule matches nothing");
            return null;
        }
        errors.add(at, "invalid, so it fails closed: it denies every connection that reaches it");
        return ClusterRule.denyEverything(index, rule.name());
    }
}
