package io.npmagent.bpf.model;

import io.npmagent.bpf.maps.PolicyMap;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.tier.RuleAction;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * One tier list (a pod side's Admin or Baseline ClusterNetworkPolicies, in order) walked for one peer:
 * the rules that match the peer, in the order they are tried, and the verdict the tier gives each
 * protocol and port, as a table of the policy map must carry it. Pure: {@link BpfModel} decides which
 * rules match which peer and writes the entries.
 *
 * <p><b>A tier</b> (DESIGN.md, "Semantics"): its rules in order, the first whose port matches decides:
 * {@code ACCEPT} allows, {@code DENY} drops, {@code PASS} hands the packet to the next part of the walk
 * ({@link PolicyMap#NEXT}), as does no match. A ClusterNetworkPolicy the pod names but the backend does
 * not hold is a rule that denies everything at its place (fail closed). The programs compose the tiers
 * (policy.h): Admin, then the pod's NetworkPolicies where they isolate it, then Baseline, then allow.
 *
 * <p><b>As a function of protocol and port.</b> Per protocol a rule matches port ranges (a named port is
 * resolved before: a one-port range), so the tier's verdict is constant between the ranges' edges: it
 * is evaluated once per piece. Every protocol other than TCP, UDP and SCTP ({@code other}) is matched
 * only by rules without ports.
 */
final class TierWalk {
    private TierWalk() {}

    /** The protocols whose ports rules name, in a fixed order. */
    static final Protocol[] PORTED = Protocol.values();

    /**
     * A rule as the walk sees it once the peer matched: what it does, the number of what decides when it does
     * ({@code AttributionRefs}; 0 for Pass), and the ports it matches (resolved), or every port.
     */
    record Step(RuleAction action, int ref, boolean anyPort, List<Range> ranges) {
        /** A policy named but not held: it denies everything at its place, with the number saying so. */
        static Step failClosed(int ref) {
            return new Step(RuleAction.DENY, ref, true, List.of());
        }

        boolean matches(Protocol protocol, int port) {
            if (anyPort) {
                return true;
            }
            for (Range r : ranges) {
                if (r.protocol() == protocol && r.first() <= port && port <= r.last()) {
                    return true;
                }
            }
            return false;
        }
    }

    record Range(Protocol protocol, int first, int last) {}

    /** The rules of one tier list that match one peer, in the order they are tried. */
    record Tier(List<Step> steps) {

        /**
         * The verdict ({@link PolicyMap#ALLOW}, {@link PolicyMap#DENY} or {@link PolicyMap#NEXT}) with the number of
         * the rule deciding it ({@link PolicyMap#packed}) for one protocol (null: one without ports) and port.
         * Pieces and entries compare these: two rules deciding alike are two entries, so each flow names its own.
         */
        int verdict(Protocol protocol, int port) {
            for (Step s : steps) {
                if (protocol == null ? s.anyPort() : s.matches(protocol, port)) {
                    return switch (s.action()) {
                        case ACCEPT -> PolicyMap.packed(PolicyMap.ALLOW, s.ref());
                        case DENY -> PolicyMap.packed(PolicyMap.DENY, s.ref());
                        case PASS -> PolicyMap.NEXT;
                    };
                }
            }
            return PolicyMap.NEXT;
        }

        /** The tier's verdict everywhere. */
        Verdicts verdicts() {
            List<List<Piece>> by = new ArrayList<>();
            for (Protocol p : PORTED) {
                TreeSet<Integer> edges = new TreeSet<>(List.of(0));
                for (Step s : steps) {
                    for (Range r : s.ranges()) {
                        if (r.protocol() == p) {
                            edges.add(r.first());
                            if (r.last() < 65535) {
                                edges.add(r.last() + 1);
                            }
                        }
                    }
                }
                List<Piece> pieces = new ArrayList<>();
                List<Integer> starts = new ArrayList<>(edges);
                for (int i = 0; i < starts.size(); i++) {
                    int first = starts.get(i);
                    int last = i + 1 < starts.size() ? starts.get(i + 1) - 1 : 65535;
                    add(pieces, new Piece(first, last, verdict(p, first)));
                }
                by.add(pieces);
            }
            return new Verdicts(verdict(null, 0), by);
        }
    }

    /** Ports {@code first} to {@code last} get {@code verdict}. */
    record Piece(int first, int last, int verdict) {}

    /**
     * A verdict for every protocol and port: one for protocols without ports ({@code other}), and per
     * protocol of {@link #PORTED} (in that order) pieces covering 0-65535, neighbours of different verdicts.
     */
    record Verdicts(int other, List<List<Piece>> by) {

        static Verdicts constant(int verdict) {
            List<List<Piece>> by = new ArrayList<>();
            for (int i = 0; i < PORTED.length; i++) {
                by.add(List.of(new Piece(0, 65535, verdict)));
            }
            return new Verdicts(verdict, by);
        }

        int at(Protocol protocol, int port) {
            if (protocol == null) {
                return other;
            }
            for (Piece p : by.get(protocol.ordinal())) {
                if (p.first() <= port && port <= p.last()) {
                    return p.verdict();
                }
            }
            throw new IllegalStateException("no piece holds port " + port);
        }

        /**
         * The entries that make a lookup for {@code identity} answer this where it answers otherwise after a
         * miss ({@code fallback}: what the entries it falls back to give, and {@link PolicyMap#NEXT} after them): none where
         * both agree; where they differ in protocols without ports, an any-protocol entry and, under it,
         * every port that differs from it; else only the ports that differ from the fallback, as aligned
         * prefixes (an LPM trie holds them; none overlaps another of the same identity but the
         * any-protocol entry).
         */
        void entries(int table, int direction, int identity, Verdicts fallback, Map<PolicyEntry, Integer> out) {
            Verdicts under = fallback;
            if (other != fallback.other()) {
                out.put(new PolicyEntry(table, direction, identity, true, 0, 0, 0), other);
                under = constant(other);
            }
            for (Protocol p : PORTED) {
                List<Piece> mine = by.get(p.ordinal());
                List<Piece> theirs = under.by().get(p.ordinal());
                for (Piece d : differing(mine, theirs)) {
                    for (PortPrefixes.Prefix prefix : PortPrefixes.of(d.first(), d.last())) {
                        out.put(new PolicyEntry(table, direction, identity, false, p.ipProtocolNumber(), prefix.port(), prefix.bits()),
                                d.verdict());
                    }
                }
            }
        }
    }

    /** The parts of {@code mine} whose verdict differs from {@code theirs} (both cover 0-65535), with mine, neighbours merged. */
    static List<Piece> differing(List<Piece> mine, List<Piece> theirs) {
        List<Piece> out = new ArrayList<>();
        int i = 0;
        int j = 0;
        int port = 0;
        while (port <= 65535) {
            Piece a = mine.get(i);
            Piece b = theirs.get(j);
            int last = Math.min(a.last(), b.last());
            if (a.verdict() != b.verdict()) {
                add(out, new Piece(port, last, a.verdict()));
            }
            if (a.last() == last) {
                i++;
            }
            if (b.last() == last) {
                j++;
            }
            port = last + 1;
        }
        return out;
    }

    /** Appends {@code p}, merged into the last piece if it continues it with the same verdict. */
    private static void add(List<Piece> pieces, Piece p) {
        if (!pieces.isEmpty()) {
            Piece last = pieces.get(pieces.size() - 1);
            if (last.last() + 1 == p.first() && last.verdict() == p.verdict()) {
                pieces.set(pieces.size() - 1, new Piece(last.first(), p.last(), p.verdict()));
                return;
            }
        }
        pieces.add(p);
    }
}
