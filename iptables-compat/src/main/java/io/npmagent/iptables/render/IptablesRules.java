package io.npmagent.iptables.render;

import io.npmagent.dataplane.desired.PortMatch;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Tier;
import io.npmagent.dataplane.desired.CompiledClusterRule;
import io.npmagent.dataplane.eval.ClusterRuleRef;
import io.npmagent.dataplane.flow.Attribution;
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
import java.util.Map;

/**
 * What each chain holds, as iptables rule specs. Pure text, from the model only.
 *
 * <p><b>Where a packet's verdict is decided.</b> {@code FORWARD} jumps first to {@code NPM-FORWARD}:
 * replies of allowed connections ({@code ESTABLISHED,RELATED}) return at once; a new connection goes
 * through {@code NPM-EGRESS} (its source's pod chain, if that pod is local and isolated for egress)
 * and {@code NPM-INGRESS} (its destination's). A pod chain clears the agent's mark bit, jumps to each
 * of the pod's policy chains in turn, and returns as soon as one has set the bit (a rule admitted the
 * packet); if none has, the last rule drops it. A policy chain sets the bit for what its rules admit.
 * Allowed packets return to FORWARD with the bit cleared, for the rules that follow ours. The bit
 * is one bit, masked, never 0x4000 or 0x8000 (kube-proxy's).
 *
 * <p><b>Tiers.</b> A ClusterNetworkPolicy chain is shared by every pod that lists it, so it cannot send a
 * packet on to one pod's next step; it leaves its decision in the mark instead. Each of its rules
 * applies only while neither the accept bit (the admitted bit above) nor the pass bit is set, so the
 * first rule that matches decides: Accept sets the accept bit, Pass the pass bit, Deny drops (silently).
 * A pod chain with tiers clears both bits; jumps to its Admin policies in order, returning (allowed) as
 * soon as the accept bit is set, each jump after the first only while the pass bit is clear (a Pass skips
 * the rest of the tier, a fail-closed drop included); clears the pass bit; then, if NetworkPolicy
 * isolates the pod, its policy chains and drop as above; else its Baseline policies, returning (allowed)
 * as soon as either bit is set, and a fall-through that returns (allowed). {@code NPM-FORWARD} clears
 * both bits at its end. A pod chain without tiers is exactly the NetworkPolicy one.
 *
 * <p><b>A pod and its own node.</b> A pod's connection to an address of its own node is delivered
 * locally and never meets FORWARD. {@code INPUT} jumps first to {@code NPM-INPUT} ({@link #inputChain}),
 * which sends a new one through {@code NPM-EGRESS} to the same pod chains, so the pod's
 * ClusterNetworkPolicies judge it in tier order. NetworkPolicy always admits the node: the drop that ends
 * an egress pod chain's NetworkPolicy part spares the node's own addresses. The node's connections to its
 * pods (kubelet's probes) leave through OUTPUT and are not judged.
 *
 * <p><b>Flow verdicts.</b> Every drop by policy (a pod chain's NetworkPolicy drop, a fail-closed drop of
 * a ClusterNetworkPolicy not held, each Deny) is written by {@link IptablesDrops}: with flows on, it
 * logs each flow's first packet with the number of what decided it, and counts the flow's packets.
 *
 * <p>Object text never appears: sets and chains are named by hashes, and comments hold a rule hash and
 * a description made only of plain characters ({@link #describe}); NFLOG prefixes hold only numbers.
 */
public final class IptablesRules {
    private final String bit;
    private final String pass;
    /** Both bits, as a mask. */
    private final String bits;
    /** How a drop by policy is written (plainly, or logged and counted per flow). */
    private final IptablesDrops drops;

    /** Drops written plainly: the chains' shape alone. */
    public IptablesRules(int markBit, int passBit) {
        this(markBit, passBit, IptablesDrops.PLAIN);
    }

    /**
     * @param markBit the mark bit for "admitted" (NetworkPolicy) and "accepted" (ClusterNetworkPolicy)
     * @param passBit the mark bit for a ClusterNetworkPolicy's Pass
     * @param drops   how drops by policy are written
     */
    public IptablesRules(int markBit, int passBit, IptablesDrops drops) {
        this.drops = drops;
        for (int b : new int[] {markBit, passBit}) {
            if (Integer.bitCount(b) != 1 || (b & 0xC000) != 0) {
                throw new IllegalArgumentException("mark bit must be one bit other than kube-proxy's 0x4000 and 0x8000, not 0x"
                        + Integer.toHexString(b));
            }
        }
        if (markBit == passBit) {
            throw new IllegalArgumentException("the mark and pass bits must differ: 0x" + Integer.toHexString(markBit));
        }
        this.bit = "0x" + Integer.toHexString(markBit);
        this.pass = "0x" + Integer.toHexString(passBit);
        this.bits = "0x" + Integer.toHexString(markBit | passBit);
    }

    /** A rule body and what its comment says about it. */
    public record Rule(String body, String description) {}

    /** The fixed entry chain. */
    public List<Rule> forwardChain() {
        return List.of(
                new Rule("-m conntrack --ctstate RELATED,ESTABLISHED -j RETURN", "replies of allowed connections"),
                new Rule("-j " + Names.chain(new ChainId.Dispatch(Direction.EGRESS, Family.IPV4)), "egress of local pods"),
                new Rule("-j " + Names.chain(new ChainId.Dispatch(Direction.INGRESS, Family.IPV4)), "ingress of local pods"),
                new Rule("-j MARK --set-xmark 0x0/" + bits, "leave no mark"));
    }

    /**
     * The fixed chain for a local pod's connections to its own node ({@code INPUT}): replies return at
     * once; a new connection (or an untracked packet, as FORWARD judges those too) to one of the node's
     * own addresses goes through {@code NPM-EGRESS}, the very pod chains FORWARD uses. Anything else that
     * reaches the node (neighbour discovery has no connection; multicast and broadcast are no address of
     * the node's) is not the agent's to judge. The NetworkPolicy part of an egress pod chain never drops a
     * destination of the node's own (the pod chain's drop), so only a
     * ClusterNetworkPolicy's rules decide here.
     */
    public List<Rule> inputChain() {
        return List.of(
                new Rule("-m conntrack --ctstate RELATED,ESTABLISHED -j RETURN", "replies of allowed connections"),
                new Rule("-m conntrack --ctstate NEW,UNTRACKED -m addrtype --dst-type LOCAL -j "
                        + Names.chain(new ChainId.Dispatch(Direction.EGRESS, Family.IPV4)), "local pods to their node"),
                new Rule("-j MARK --set-xmark 0x0/" + bits, "leave no mark"));
    }

    /** A built-in chain the agent hooks with one jump, kept first there, to a fixed chain of its own. */
    public enum Hook {
        FORWARD("FORWARD", Names.FORWARD_CHAIN, "npm:forward npm-agent NetworkPolicy"),
        INPUT("INPUT", Names.INPUT_CHAIN, "npm:input npm-agent pods to their node");

        private final String builtin;
        private final String chain;
        private final String comment;

        Hook(String builtin, String chain, String comment) {
            this.builtin = builtin;
            this.chain = chain;
            this.comment = comment;
        }

        /** The built-in chain: {@code FORWARD} or {@code INPUT}. */
        public String builtin() {
            return builtin;
        }

        /** The agent's chain it jumps to. */
        public String chain() {
            return chain;
        }

        /** The jump's rule spec, as written after {@code -I <builtin> 1 }. */
        public String jump() {
            return "-m comment --comment \"" + comment + "\" -j " + chain;
        }
    }

    /** The rules of one of the agent's fixed chains. */
    public List<Rule> fixedChain(Hook hook) {
        return hook == Hook.FORWARD ? forwardChain() : inputChain();
    }

    public List<Rule> rules(NetfilterModel model, ChainId chain) {
        if (chain instanceof ChainId.Dispatch d) {
            return dispatch(model.dispatch(d), d);
        }
        if (chain instanceof ChainId.PodChain p) {
            return podChain(model, p);
        }
        if (chain instanceof ChainId.ClusterPolicyChain c) {
            return clusterPolicyChain(model, c);
        }
        return policyChain(model.rules((ChainId.PolicyChain) chain), (ChainId.PolicyChain) chain);
    }

    private List<Rule> dispatch(Map<IpAddress, PodKey> pods, ChainId.Dispatch d) {
        List<Rule> out = new ArrayList<>();
        String side = d.direction() == Direction.INGRESS ? "-d " : "-s ";
        pods.forEach((ip, pod) -> out.add(new Rule(
                side + ip + "/" + ip.bitLength() + " -j " + Names.chain(new ChainId.PodChain(pod, d.direction(), d.family())),
                "pod " + describe(pod.toString()))));
        return out;
    }

    /**
     * A pod chain: its policies in order, each marking what it admits, then drop. A pod reaching itself
     * through its Service (which kube-proxy DNATs back to it) is judged here like any other peer: its
     * own address is the peer. For egress the drop spares a destination of the node's own: never one in
     * FORWARD, always one from {@code NPM-INPUT}, where NetworkPolicy admits the pod's own node (and what
     * falls through returns, allowed). Not a rule of its own, so a pod chain costs no rule more for it.
     */
    private List<Rule> podChain(List<PolicyKey> policies, ChainId.PodChain p, Attribution.Isolation isolation) {
        List<Rule> out = new ArrayList<>();
        out.add(new Rule("-j MARK --set-xmark 0x0/" + bit, "start"));
        for (PolicyKey policy : policies) {
            out.add(new Rule("-j " + Names.chain(new ChainId.PolicyChain(policy, p.direction(), p.family())),
                    "policy " + describe(policy.toString())));
            out.add(new Rule("-m mark --mark " + bit + "/" + bit + " -j RETURN", "admitted"));
        }
        boolean egress = p.direction() == Direction.EGRESS;
        out.addAll(drops.drop(egress ? "-m addrtype ! --dst-type LOCAL " : "", false, p.direction(), p.family(), isolation,
                "drop: " + describe(p.pod().toString()) + " isolated for " + p.direction().apiName().toLowerCase(Locale.ROOT)
                        + (egress ? ", not to its node" : "")));
        return out;
    }

    /**
     * A pod chain: without tiers, its NetworkPolicies then drop; with tiers, as the class javadoc says. A
     * NetworkPolicy drop names every NetworkPolicy the pod lists for the direction (those that isolate it).
     */
    private List<Rule> podChain(NetfilterModel model, ChainId.PodChain p) {
        NetfilterModel.PodSteps steps = model.steps(p);
        Attribution.Isolation isolation = new Attribution.Isolation(p.direction(), model.isolating(p));
        if (!steps.tiered()) {
            return podChain(steps.policies(), p, isolation);
        }
        List<Rule> out = new ArrayList<>();
        out.add(new Rule("-j MARK --set-xmark 0x0/" + bits, "start"));
        String notPassed = "-m mark --mark 0x0/" + pass + " ";
        for (int i = 0; i < steps.admin().size(); i++) {
            String name = steps.admin().get(i);
            out.add(new Rule((i == 0 ? "" : notPassed) + "-j " + clusterChain(name, p), "admin " + describe(name)));
            out.add(new Rule("-m mark --mark " + bit + "/" + bit + " -j RETURN", "accepted"));
        }
        if (steps.adminFailsClosed()) {
            out.addAll(drops.drop(steps.admin().isEmpty() ? "" : notPassed, false, p.direction(), p.family(), unheld(model, p, Tier.ADMIN),
                    "admin policy not held: fail closed"));
        }
        if (!steps.admin().isEmpty()) {
            out.add(new Rule("-j MARK --set-xmark 0x0/" + pass, "end of admin tier"));
        }
        if (steps.isolated()) {
            List<Rule> policies = podChain(steps.policies(), p, isolation);
            out.addAll(policies.subList(1, policies.size())); // the bits are clear already
            return out;
        }
        for (String name : steps.baseline()) {
            out.add(new Rule("-j " + clusterChain(name, p), "baseline " + describe(name)));
            out.add(new Rule("-m mark ! --mark 0x0/" + bits + " -j RETURN", "baseline accept or pass: allowed"));
        }
        if (steps.baselineFailsClosed()) {
            out.addAll(drops.drop("", false, p.direction(), p.family(), unheld(model, p, Tier.BASELINE), "baseline policy not held: fail closed"));
        }
        return out; // what falls through returns: allowed
    }

    /** What a fail-closed drop names: the tier and the first policy of it the pod lists that is not held. */
    private static Attribution unheld(NetfilterModel model, ChainId.PodChain p, Tier tier) {
        String name = model.unheld(p, tier);
        return new Attribution.Unheld(tier, name == null ? "" : name);
    }

    private static String clusterChain(String name, ChainId.PodChain p) {
        return Names.chain(new ChainId.ClusterPolicyChain(name, p.direction(), p.family()));
    }

    /**
     * A ClusterNetworkPolicy chain: each (peer, port) of each rule, in order, with its rule's action, each
     * only while no earlier one has decided (neither bit set).
     */
    private List<Rule> clusterPolicyChain(NetfilterModel model, ChainId.ClusterPolicyChain chain) {
        List<Rule> out = new ArrayList<>();
        String where = "cnp " + describe(chain.policy()) + " " + chain.direction().apiName().toLowerCase(Locale.ROOT);
        Tier tier = model.clusterTier(chain.policy());
        for (RuleSpec spec : model.rules(chain)) {
            String condition = "-m mark --mark 0x0/" + bits + " " + matches(spec, chain.direction(), chain.family());
            String description = where + "[" + spec.index() + "] " + spec.action().apiName().toLowerCase(Locale.ROOT);
            if (spec.action() == RuleAction.DENY) {
                CompiledClusterRule rule = model.clusterRule(chain.policy(), chain.direction(), spec.index());
                Attribution a = new Attribution.ByClusterRule(new ClusterRuleRef(tier, chain.policy(), chain.direction(), spec.index(),
                        rule == null ? null : rule.name()), RuleAction.DENY);
                out.addAll(drops.drop(condition, spec.port() != null, chain.direction(), chain.family(), a, description));
                continue;
            }
            String body = condition + (spec.action() == RuleAction.ACCEPT ? "-j MARK --set-xmark " + bit + "/" + bit
                    : "-j MARK --set-xmark " + pass + "/" + pass);
            out.add(new Rule(body, description));
        }
        return out;
    }

    /** A spec's peer and port matches, each followed by a space. */
    private static String matches(RuleSpec spec, Direction direction, Family family) {
        StringBuilder body = new StringBuilder();
        String peerSide = direction == Direction.INGRESS ? "src" : "dst";
        if (spec.peers() != null) {
            body.append("-m set --match-set ").append(Names.ipset(spec.peers())).append(' ').append(peerSide).append(' ');
        }
        if (spec.port() != null) {
            body.append(port(spec.port(), family)).append(' ');
        }
        return body.toString();
    }

    private List<Rule> policyChain(List<RuleSpec> specs, ChainId.PolicyChain chain) {
        List<Rule> out = new ArrayList<>();
        String where = describe(chain.policy().toString()) + " " + chain.direction().apiName().toLowerCase(Locale.ROOT);
        for (RuleSpec spec : specs) {
            String body = matches(spec, chain.direction(), chain.family()) + "-j MARK --set-xmark " + bit + "/" + bit;
            out.add(new Rule(body, where + "[" + spec.index() + "]"));
        }
        return out;
    }

    private static String port(PortMatch port, Family family) {
        String proto = port.protocol().name().toLowerCase(Locale.ROOT);
        if (port instanceof PortMatch.NamedPort np) {
            return "-p " + proto + " -m set --match-set " + Names.ipset(new SetId.NamedPort(np, family)) + " dst,dst";
        }
        PortMatch.PortRange r = (PortMatch.PortRange) port;
        if (r.first() == 0 && r.last() == 65535) {
            return "-p " + proto;
        }
        String ports = r.first() == r.last() ? Integer.toString(r.first()) : r.first() + ":" + r.last();
        return "-p " + proto + " -m " + proto + " --dport " + ports;
    }

    /**
     * Text for a comment: untrusted names reduced to characters that cannot end a quoted restore token
     * or a line ({@code A-Z a-z 0-9 . _ / - : [ ]}; anything else becomes {@code _}), at most 120 of them.
     */
    public static String describe(String text) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < text.length() && sb.length() < 120; i++) {
            char c = text.charAt(i);
            boolean plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '.' || c == '_' || c == '/' || c == '-' || c == ':' || c == '[' || c == ']';
            sb.append(plain ? c : '_');
        }
        return sb.toString();
    }
}
