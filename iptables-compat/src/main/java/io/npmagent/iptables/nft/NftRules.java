package io.npmagent.iptables.nft;

import io.npmagent.dataplane.desired.CompiledClusterRule;
import io.npmagent.dataplane.desired.PortMatch;
import io.npmagent.dataplane.eval.ClusterRuleRef;
import io.npmagent.dataplane.flow.Attribution;
import io.npmagent.dataplane.model.Tier;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.tier.RuleAction;
import io.npmagent.iptables.model.ChainId;
import io.npmagent.iptables.model.Family;
import io.npmagent.iptables.model.Names;
import io.npmagent.iptables.model.NetfilterModel;
import io.npmagent.iptables.model.RuleSpec;
import io.npmagent.iptables.model.SetId;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What each chain of the agent's table holds, as nft rule text. Pure: from the model only.
 *
 * <p>A base chain lets replies of allowed connections through, then sends each packet whose address
 * is a local judged pod's to that pod's chain through a verdict map ({@code to_node}, on the input hook:
 * a pod's new connections to its own node, to its egress chain; {@link #toNodeChain}). A pod chain jumps to each of
 * the pod's policy chains in turn and drops what none of them accepted. A policy chain accepts what
 * its rules admit: one rule per (peer, port) of the model ({@link NetfilterModel#rules}).
 *
 * <p><b>Tiers</b> ({@link #podChain(NetfilterModel.PodSteps, ChainId.PodChain)}). A ClusterNetworkPolicy
 * chain, shared by every pod that lists it, turns the first rule that matches into {@code accept} (this
 * side allows: {@code accept} ends only the base chain), {@code drop} (Deny: silent), or, for Pass, sets
 * {@link #PASS_BIT} and returns. A pod chain with tiers clears that bit, jumps to its Admin policies in
 * order (each after the first only while the bit is clear, so a Pass skips the rest of the tier, a
 * fail-closed drop included), clears the bit; then, if NetworkPolicy isolates the pod, its policy chains
 * and {@code drop}; else its Baseline policies in order, each followed by "bit set: clear it and accept"
 * (a Pass in Baseline skips to the end, allow), and a fall-through back to the base chain, which
 * accepts. A pod chain without tiers is exactly the NetworkPolicy one.
 *
 * <p>Object text never appears: sets and chains are named by hashes ({@link NftNames}), and a comment
 * holds the rule's hash and a description made only of plain characters ({@link #describe}).
 */
public final class NftRules {
    /** nft refuses longer comments. */
    static final int MAX_COMMENT = 128;
    /**
     * The packet-mark bit a ClusterNetworkPolicy chain sets for Pass, read and cleared by the pod chain
     * that jumped to it: never left set on a packet. The iptables backend's default pass bit; never
     * kube-proxy's 0x4000 or 0x8000.
     */
    public static final int PASS_BIT = 0x40000;
    private static final String PASSED = String.format("meta mark & 0x%08x == 0x%08x", PASS_BIT, PASS_BIT);
    private static final String NOT_PASSED = String.format("meta mark & 0x%08x == 0x00000000", PASS_BIT);
    private static final String CLEAR_PASS = String.format("meta mark set meta mark & 0x%08x", ~PASS_BIT);
    private static final String SET_PASS = String.format("meta mark set meta mark | 0x%08x", PASS_BIT);

    private NftRules() {}

    /** A rule body (matches and verdict, without the comment) and what its comment says about it. */
    public record Rule(String body, String description) {}

    /** A rule as it is written: its hash (what read-back compares) and its full text. */
    public record Line(String hash, String text) {}

    /** The rules of a base chain: replies first, then dispatch per family. */
    public static List<Rule> baseChain(Direction d) {
        String side = d == Direction.INGRESS ? "daddr" : "saddr";
        String what = d == Direction.INGRESS ? "ingress" : "egress";
        List<Rule> out = new ArrayList<>();
        out.add(new Rule("ct state established,related accept", "replies of allowed connections"));
        for (Family f : Family.values()) {
            out.add(new Rule(ip(f) + " " + side + " vmap @" + NftNames.dispatchMap(new ChainId.Dispatch(d, f)),
                    what + " of local isolated pods ipv" + f.digit()));
        }
        return out;
    }

    /**
     * The rules of the base chain on the input hook ({@link NftNames#TO_NODE}): a local pod's connections to
     * its own node. Replies are accepted at once; a new connection (or an untracked packet, as the forward
     * hook judges those too) to one of the node's own addresses goes to the pod's egress chain through the
     * same verdict maps as {@code egress}. Anything else that reaches the node (neighbour discovery has no
     * connection; multicast and broadcast are no address of the node's) falls off the chain's
     * {@code accept} policy. An egress pod chain's NetworkPolicy part never drops a destination of the
     * node's own (the pod chain's drop), so only ClusterNetworkPolicies decide here.
     */
    public static List<Rule> toNodeChain() {
        List<Rule> out = new ArrayList<>();
        out.add(new Rule("ct state established,related accept", "replies of allowed connections"));
        for (Family f : Family.values()) {
            out.add(new Rule("ct state new,untracked fib daddr type local " + ip(f) + " saddr vmap @"
                    + NftNames.dispatchMap(new ChainId.Dispatch(Direction.EGRESS, f)), "local pods to their node ipv" + f.digit()));
        }
        return out;
    }

    /** The rules of a policy or pod chain, its policy drops written as {@code drops} says (flow logging). */
    public static List<Rule> rules(NetfilterModel model, ChainId chain, NftDrops drops) {
        if (chain instanceof ChainId.PodChain p) {
            return podChain(model, p, drops);
        }
        if (chain instanceof ChainId.ClusterPolicyChain c) {
            return clusterPolicyChain(model, c, drops);
        }
        return policyChain(model.rules((ChainId.PolicyChain) chain), (ChainId.PolicyChain) chain);
    }

    /** The rules of a policy or pod chain, drops written plainly. */
    public static List<Rule> rules(NetfilterModel model, ChainId chain) {
        return rules(model, chain, NftDrops.PLAIN);
    }

    /** A pod chain: without tiers, its NetworkPolicies then drop; with tiers, as the class javadoc says. */
    static List<Rule> podChain(NetfilterModel model, ChainId.PodChain p, NftDrops drops) {
        NetfilterModel.PodSteps steps = model.steps(p);
        Attribution.Isolation isolation = new Attribution.Isolation(p.direction(), model.isolating(p));
        if (!steps.tiered()) {
            return podChain(steps.policies(), p, drops, isolation);
        }
        List<Rule> out = new ArrayList<>();
        out.add(new Rule(CLEAR_PASS, "start"));
        for (int i = 0; i < steps.admin().size(); i++) {
            String name = steps.admin().get(i);
            out.add(new Rule((i == 0 ? "" : NOT_PASSED + " ") + "jump " + clusterChain(name, p), "admin " + describe(name)));
        }
        if (steps.adminFailsClosed()) {
            out.addAll(drops.drop(steps.admin().isEmpty() ? "" : NOT_PASSED + " ", p.direction(), p.family(),
                    unheld(model, p, Tier.ADMIN), "admin policy not held: fail closed"));
        }
        if (!steps.admin().isEmpty()) {
            out.add(new Rule(CLEAR_PASS, "end of admin tier"));
        }
        if (steps.isolated()) {
            out.addAll(podChain(steps.policies(), p, drops, isolation));
            return out;
        }
        for (String name : steps.baseline()) {
            out.add(new Rule("jump " + clusterChain(name, p), "baseline " + describe(name)));
            out.add(new Rule(PASSED + " " + CLEAR_PASS + " accept", "baseline pass: allowed"));
        }
        if (steps.baselineFailsClosed()) {
            out.addAll(drops.drop("", p.direction(), p.family(), unheld(model, p, Tier.BASELINE), "baseline policy not held: fail closed"));
        }
        return out; // what falls through returns to the base chain, whose policy accepts
    }

    private static Attribution unheld(NetfilterModel model, ChainId.PodChain p, Tier tier) {
        String name = model.unheld(p, tier);
        return new Attribution.Unheld(tier, name == null ? "" : name);
    }

    private static String clusterChain(String name, ChainId.PodChain p) {
        return NftNames.chain(new ChainId.ClusterPolicyChain(name, p.direction(), p.family()));
    }

    /**
     * A ClusterNetworkPolicy chain: each (peer, port) of each rule, in order, with its rule's action; a Deny
     * is a policy drop ({@link NftDrops}) naming its tier, policy and rule.
     */
    static List<Rule> clusterPolicyChain(NetfilterModel model, ChainId.ClusterPolicyChain chain, NftDrops drops) {
        String where = "cnp " + describe(chain.policy()) + " " + dir(chain.direction());
        Tier tier = model.clusterTier(chain.policy());
        return ruleChain(model.rules(chain), chain.direction(), chain.family(), where, (spec, matches, description) -> {
            CompiledClusterRule rule = model.clusterRule(chain.policy(), chain.direction(), spec.index());
            Attribution a = new Attribution.ByClusterRule(new ClusterRuleRef(tier, chain.policy(), chain.direction(), spec.index(),
                    rule == null ? null : rule.name()), RuleAction.DENY);
            return drops.drop(matches, chain.direction(), chain.family(), a, description);
        });
    }

    /** A ClusterNetworkPolicy chain with its Deny rules written plainly. */
    static List<Rule> clusterPolicyChain(List<RuleSpec> specs, ChainId.ClusterPolicyChain chain) {
        String where = "cnp " + describe(chain.policy()) + " " + dir(chain.direction());
        return ruleChain(specs, chain.direction(), chain.family(), where, null);
    }

    /** How a Deny spec is written: from its matches (each followed by a space) and its description. */
    @FunctionalInterface
    private interface DenyWriter {
        List<Rule> write(RuleSpec spec, String matches, String description);
    }

    /**
     * A pod chain: its policies in order, then drop. A pod reaching itself through its Service (which
     * kube-proxy DNATs back to it) is judged here like any other peer: its own address is the peer. For
     * egress the drop spares a destination of the node's own: never one on the forward hook, always one
     * from {@link #toNodeChain}, where NetworkPolicy admits the pod's own node (what falls through goes
     * back to the base chain, which accepts). Not a rule of its own, so a pod chain costs no rule more.
     */
    static List<Rule> podChain(List<PolicyKey> policies, ChainId.PodChain p) {
        return podChain(policies, p, NftDrops.PLAIN, new Attribution.Isolation(p.direction(), policies));
    }

    private static List<Rule> podChain(List<PolicyKey> policies, ChainId.PodChain p, NftDrops drops, Attribution.Isolation isolation) {
        List<Rule> out = new ArrayList<>();
        for (PolicyKey policy : policies) {
            // The policy chain accepts (which ends this base chain) or returns here for the next one.
            out.add(new Rule("jump " + NftNames.chain(new ChainId.PolicyChain(policy, p.direction(), p.family())),
                    "policy " + describe(policy.toString())));
        }
        boolean egress = p.direction() == Direction.EGRESS;
        out.addAll(drops.drop(egress ? "fib daddr type != local " : "", p.direction(), p.family(), isolation,
                "drop: " + describe(p.pod().toString()) + " isolated for " + dir(p.direction()) + (egress ? ", not to its node" : "")));
        return out;
    }

    static List<Rule> policyChain(List<RuleSpec> specs, ChainId.PolicyChain chain) {
        return ruleChain(specs, chain.direction(), chain.family(), describe(chain.policy().toString()) + " " + dir(chain.direction()), null);
    }

    private static List<Rule> ruleChain(List<RuleSpec> specs, Direction direction, Family family, String where, DenyWriter deny) {
        List<Rule> out = new ArrayList<>();
        String peerSide = direction == Direction.INGRESS ? "saddr" : "daddr";
        for (RuleSpec spec : specs) {
            List<String> matches = new ArrayList<>();
            if (spec.peers() != null) {
                matches.add(peer(spec.peers(), ip(family) + " " + peerSide));
            }
            if (spec.port() != null) {
                matches.add(port(spec.port(), family));
            }
            String action = spec.action() == RuleAction.ACCEPT ? "" : " " + spec.action().apiName().toLowerCase(Locale.ROOT);
            String description = where + " rule " + spec.index() + action;
            if (spec.action() == RuleAction.DENY && deny != null) {
                out.addAll(deny.write(spec, matches.isEmpty() ? "" : String.join(" ", matches) + " ", description));
                continue;
            }
            matches.add(verdict(spec.action()));
            out.add(new Rule(String.join(" ", matches), description));
        }
        return out;
    }

    /** Accept ends this base chain (this side allows); Deny drops, silently; Pass marks and returns to the pod chain. */
    private static String verdict(RuleAction action) {
        return switch (action) {
            case ACCEPT -> "accept";
            case DENY -> "drop";
            case PASS -> SET_PASS + " return";
        };
    }

    private static String peer(SetId set, String field) {
        if (set instanceof SetId.Cidr c && !c.key().except().isEmpty()) {
            return field + " @" + NftNames.set(set) + " " + field + " != @" + NftNames.excepts(c);
        }
        return field + " @" + NftNames.set(set);
    }

    private static String port(PortMatch port, Family family) {
        String proto = port.protocol().name().toLowerCase(Locale.ROOT);
        if (port instanceof PortMatch.NamedPort np) {
            // A named port resolves on the destination: for ingress the pod itself, for egress the peer.
            return ip(family) + " daddr . meta l4proto . th dport @" + NftNames.set(new SetId.NamedPort(np, family));
        }
        PortMatch.PortRange r = (PortMatch.PortRange) port;
        if (r.first() == 0 && r.last() == 65535) {
            return "meta l4proto " + proto;
        }
        return proto + " dport " + (r.first() == r.last() ? Integer.toString(r.first()) : r.first() + "-" + r.last());
    }

    /**
     * Rules with their comments: {@code npm:<hash> <description>}. The hash covers the chain, the
     * position and the body, so read-back compares hashes only and nft's respelling of a rule never
     * looks like drift.
     */
    public static List<Line> lines(String chain, List<Rule> rules) {
        List<Line> out = new ArrayList<>();
        for (int i = 0; i < rules.size(); i++) {
            Rule r = rules.get(i);
            String hash = Names.hash(chain + "|" + i + "|" + r.body(), 16);
            String comment = "npm:" + hash + (r.description().isEmpty() ? "" : " " + r.description());
            if (comment.length() > MAX_COMMENT) {
                comment = comment.substring(0, MAX_COMMENT);
            }
            out.add(new Line(hash, r.body() + " comment \"" + comment + "\""));
        }
        return out;
    }

    /**
     * Text for a comment: untrusted names reduced to {@code A-Z a-z 0-9 . _ / : -} (anything else,
     * quotes, spaces, newlines and non-ASCII letters included, becomes {@code _}), at most 100 of them,
     * so a name can neither end the quoted comment nor the line.
     */
    public static String describe(String text) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < text.length() && sb.length() < 100; i++) {
            char c = text.charAt(i);
            boolean plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '.' || c == '_' || c == '/' || c == ':' || c == '-';
            sb.append(plain ? c : '_');
        }
        return sb.toString();
    }

    private static String ip(Family f) {
        return f == Family.IPV4 ? "ip" : "ip6";
    }

    private static String dir(Direction d) {
        return d.apiName().toLowerCase(Locale.ROOT);
    }
}
