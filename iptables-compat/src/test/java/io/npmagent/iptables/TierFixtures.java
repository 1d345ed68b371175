package io.npmagent.iptables;

import static io.npmagent.iptables.TierOverlay.rule;
import static io.npmagent.iptables.TierOverlay.tcp;

import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.desired.PortMatch;
import io.npmagent.dataplane.desired.TierPolicies;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.model.Selector;
import io.npmagent.dataplane.tier.RuleAction;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * ClusterNetworkPolicies over the backend contracts' clusters (both have pods x/web, isolated for
 * ingress by x/web and serving the named port http, and x/api, isolated for egress by x/api-egress):
 * <ul>
 *   <li>{@code adm-first} ingress: Pass from 192.0.2.0/24 (IPv4 only), Deny from app=api pods on TCP 8080;</li>
 *   <li>{@code adm-second} ingress: Accept TCP 22 from anyone, Accept the named port http from anyone;</li>
 *   <li>{@code base}: ingress Deny everything; egress Deny to 198.51.100.0/24;</li>
 *   <li>{@link #EVIL}: a name that would break a script, ingress Accept TCP 9.</li>
 * </ul>
 * x/web: Admin ingress [adm-first, adm-second], Baseline ingress [base] (never reached: x/web isolates it).
 * x/api: Admin ingress [EVIL, adm-second], Baseline ingress [base], Baseline egress [base] (never reached).
 */
public final class TierFixtures {
    public static final String EVIL = "evil\"; delete table inet npm_agent; $(reboot) `id`\n# \u2603 \\ '{}";
    public static final PodKey WEB = new PodKey("x", "web");
    public static final PodKey API = new PodKey("x", "api");
    public static final PeerSetKey.SelectorPeers API_PODS = PeerSetKey.SelectorPeers.acrossNamespaces(Selector.ALL,
            new Selector(new TreeMap<>(Map.of("app", "api")), List.of()));

    private TierFixtures() {}

    public static TierOverlay overlay() {
        return new TierOverlay()
                .members(API_PODS, API)
                .policy("adm-first", List.of(
                        rule(0, RuleAction.PASS, List.of(cidr("192.0.2.0/24")), List.of()),
                        rule(1, RuleAction.DENY, List.of(API_PODS), tcp(8080))), List.of())
                .policy("adm-second", List.of(
                        rule(0, RuleAction.ACCEPT, List.of(), tcp(22)),
                        rule(1, RuleAction.ACCEPT, List.of(), List.of(new PortMatch.NamedPort(Protocol.TCP, "http")))), List.of())
                .policy("base", List.of(rule(0, RuleAction.DENY, List.of(), List.of())),
                        List.of(rule(0, RuleAction.DENY, List.of(cidr("198.51.100.0/24")), List.of())))
                .policy(EVIL, List.of(rule(0, RuleAction.ACCEPT, List.of(), tcp(9))), List.of())
                .tiers(WEB, new TierPolicies(List.of("adm-first", "adm-second"), List.of(), List.of("base"), List.of()))
                .tiers(API, new TierPolicies(List.of(EVIL, "adm-second"), List.of(), List.of("base"), List.of("base")));
    }

    public static PeerSetKey.CidrPeers cidr(String text) {
        return new PeerSetKey.CidrPeers(Cidr.parse(text), List.of());
    }
}
