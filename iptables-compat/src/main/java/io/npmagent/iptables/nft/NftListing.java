package io.npmagent.iptables.nft;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads {@code nft -j list table inet npm_agent} into what the agent compares: each chain's hook (for
 * base chains) and its rules' hashes in order, and each set's or map's type and elements. Rule bodies
 * are never parsed: the {@code npm:<hash>} comment says what a rule is; a rule without one (added by
 * hand) reads as {@code foreign}, which matches no wanted hash, so its chain is rewritten. Elements are
 * normalised by {@link NftElements}; a set holding one that the agent could not have written reads as
 * unreadable, and is replaced whole. Other objects (counters, quotas, flowtables) are not the agent's
 * and are left alone: no rule of the agent's names them.
 */
final class NftListing {
    static final String FOREIGN = "foreign";
    private static final Pattern HASH = Pattern.compile("^npm:([a-z2-7]{16})(?: |$)");

    private NftListing() {}

    /** What one listing holds. */
    /** @param flowSets the flow sets present ({@link NftDrops}): by name only, their elements are the kernel's */
    record Contents(Map<String, NftTable.ChainState> chains, Map<String, NftTable.SetState> sets, Set<String> flowSets) {
        static final Contents NOTHING = new Contents(Map.of(), Map.of(), Set.of());
    }

    static Contents parse(String json) {
        Object root = Json.parse(json);
        if (!(root instanceof Map<?, ?> top) || !(top.get("nftables") instanceof List<?> items)) {
            throw new Json.JsonException("not an nft listing: no \"nftables\" array");
        }
        Map<String, String> hooks = new LinkedHashMap<>();
        Map<String, Long> chainHandles = new LinkedHashMap<>();
        Map<String, List<String>> rules = new LinkedHashMap<>();
        Map<String, NftTable.SetState> sets = new LinkedHashMap<>();
        Set<String> flowSets = new TreeSet<>();
        for (Object item : items) {
            if (!(item instanceof Map<?, ?> wrapper) || wrapper.size() != 1) {
                continue;
            }
            String kind = String.valueOf(wrapper.keySet().iterator().next());
            if (!(wrapper.values().iterator().next() instanceof Map<?, ?> o) || !ours(o, kind)) {
                continue;
            }
            if (kind.equals("chain")) {
                String name = string(o, "name");
                chainHandles.put(name, handle(o));
                hooks.put(name, o.containsKey("hook") ? NftTable.hookSpec(
                        string(o, "type"), string(o, "hook"), String.valueOf(o.get("prio")), string(o, "policy")) : null);
                rules.putIfAbsent(name, new ArrayList<>());
            } else if (kind.equals("rule")) {
                rules.computeIfAbsent(string(o, "chain"), k -> new ArrayList<>()).add(hash(o.get("comment")));
            } else if (kind.equals("set") && NftDrops.isFlowSet(string(o, "name"))) {
                flowSets.add(string(o, "name")); // never compared: the kernel fills it
            } else if (kind.equals("set") || kind.equals("map")) {
                sets.put(string(o, "name"), set(kind, o));
            }
        }
        Map<String, NftTable.ChainState> chains = new LinkedHashMap<>();
        chainHandles.forEach((name, handle) ->
                chains.put(name, new NftTable.ChainState(hooks.get(name), List.copyOf(rules.get(name)), handle)));
        return new Contents(chains, sets, flowSets);
    }

    /** Objects of this table only (the command lists one table, but the check costs nothing). */
    private static boolean ours(Map<?, ?> o, String kind) {
        Object table = kind.equals("table") ? o.get("name") : o.get("table");
        return NftNames.FAMILY.equals(o.get("family")) && NftNames.TABLE.equals(table);
    }

    /** A member that must be a string: a listing without it is not one nft wrote. */
    private static String string(Map<?, ?> o, String key) {
        if (o.get(key) instanceof String s) {
            return s;
        }
        throw new Json.JsonException("nft listing: \"" + key + "\" missing or not a string in " + o.keySet());
    }

    private static String hash(Object comment) {
        if (comment instanceof String c) {
            Matcher m = HASH.matcher(c);
            if (m.find()) {
                return m.group(1);
            }
        }
        return FOREIGN;
    }

    private static NftTable.SetState set(String kind, Map<?, ?> o) {
        boolean map = kind.equals("map");
        StringBuilder signature = new StringBuilder(kind).append(' ').append(type(o.get("type")));
        if (map) {
            signature.append(" : ").append(o.get("map"));
        }
        if (o.get("flags") instanceof List<?> flags) {
            new TreeSet<>(flags.stream().map(String::valueOf).toList()).forEach(f -> signature.append(' ').append(f));
        } else if (o.get("flags") instanceof String flag) {
            signature.append(' ').append(flag);
        }
        Set<String> elements = new HashSet<>();
        boolean readable = true;
        if (o.get("elem") instanceof List<?> elems) {
            for (Object e : elems) {
                Optional<String> text = map ? NftElements.dispatchFromJson(e) : NftElements.fromJson(e);
                if (text.isPresent()) {
                    elements.add(text.get());
                } else {
                    readable = false;
                }
            }
        }
        return new NftTable.SetState(signature.toString(), elements, readable, handle(o));
    }

    private static String type(Object type) {
        if (type instanceof List<?> parts) {
            return String.join(" . ", parts.stream().map(String::valueOf).toList());
        }
        return String.valueOf(type);
    }

    private static long handle(Map<?, ?> o) {
        return o.get("handle") instanceof Long h ? h : -1;
    }
}
