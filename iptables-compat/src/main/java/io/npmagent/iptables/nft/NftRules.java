package io.npmagent.iptables.nft;

import io.npmagent.dataplane.desired.PortMatch;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.PolicyKey;
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
 * is a local isolated pod's to that pod's chain through a verdict map. A pod chain jumps to each of
 * the pod's policy chains in turn and drops what none of them accepted. A policy chain accepts what
 * its rules admit: one rule per (peer, port) of the model ({@link NetfilterModel#rules}).
 *
 * <p>Object text never appears: sets and chains are named by hashes ({@link NftNames}), and a comment
 * holds the rule's hash and a description made only of plain characters ({@link #describe}).
 */
public final class NftRules {
    /** nft refuses longer comments. */
    static final int MAX_COMMENT = 128;

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

    /** The rules of a policy or pod chain. */
    public static List<Rule> rules(NetfilterModel model, ChainId chain) {
        if (chain instanceof ChainId.PodChain p) {
            return podChain(model.policies(p), p);
        }
        return policyChain(model.rules((ChainId.PolicyChain) chain), (ChainId.PolicyChain) chain);
    }

    /**
     * A pod chain: its policies in order, then drop. A pod reaching itself through its Service (which
     * kube-proxy DNATs back to it) is judged here like any other peer: its own address is the peer.
     */
    static List<Rule> podChain(List<PolicyKey> policies, ChainId.PodChain p) {
        List<Rule> out = new ArrayList<>();
        for (PolicyKey policy : policies) {
            // The policy chain accepts (which ends this base chain) or returns here for the next one.
            out.add(new Rule("jump " + NftNames.chain(new ChainId.PolicyChain(policy, p.direction(), p.family())),
                    "policy " + describe(policy.toString())));
        }
        out.add(new Rule("drop", "drop: " + describe(p.pod().toString()) + " isolated for " + dir(p.direction())));
        return out;
    }

    static List<Rule> policyChain(List<RuleSpec> specs, ChainId.PolicyChain chain) {
        List<Rule> out = new ArrayList<>();
        String where = describe(chain.policy().toString()) + " " + dir(chain.direction());
        String peerSide = chain.direction() == Direction.INGRESS ? "saddr" : "daddr";
        for (RuleSpec spec : specs) {
            List<String> matches = new ArrayList<>();
            if (spec.peers() != null) {
                matches.add(peer(spec.peers(), ip(chain.family()) + " " + peerSide));
            }
            if (spec.port() != null) {
                matches.add(port(spec.port(), chain.family()));
            }
            matches.add("accept");
            out.add(new Rule(String.join(" ", matches), where + " rule " + spec.index()));
        }
        return out;
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
