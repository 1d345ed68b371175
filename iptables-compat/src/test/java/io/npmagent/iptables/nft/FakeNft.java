package io.npmagent.iptables.nft;

import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.CommandRunner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code nft} in memory, for the statements the backend writes, with the kernel's checks: a rule or an
 * element may only name chains and sets that exist, a chain or set that is still named cannot be deleted,
 * a missing element cannot be deleted, a map key cannot be added twice with different verdicts, and a
 * base chain cannot move to another hook. A script is applied to a copy that replaces the table only if
 * every statement passed, as the kernel's transaction does. {@code nft -j list table} (and the quick
 * reconcile's {@code list chains} and {@code list map}) prints the table in
 * nft's JSON shapes (prefixes, concatenations, map pairs). Kernel tests check the same against nft itself.
 */
final class FakeNft implements CommandRunner {
    /** The two commands the backend runs. */
    static final List<String> LIST = List.of("nft", "-j", "list", "table", "inet", "npm_agent");
    static final List<String> APPLY = List.of("nft", "-f", "-");
    /** The quick reconcile's listings: every chain of the family (no rules), one map of the table. */
    static final List<String> LIST_CHAINS = List.of("nft", "-j", "list", "chains", "inet");
    private static final List<String> LIST_MAP = List.of("nft", "-j", "list", "map", "inet", "npm_agent");
    private static final Pattern STATEMENT = Pattern.compile(
            "(add|flush|delete) (table|chain|set|map|element|rule) inet npm_agent ?(\\S*) ?(.*)");
    private static final Pattern COMMENT = Pattern.compile("^(.*) comment \"([^\"]*)\"$");

    private Table table;
    private long handles;
    final List<String> scripts = new ArrayList<>();
    int lists;
    /** Scripts this returns refused, as nft would refuse a rule the kernel cannot take. */
    Predicate<String> refuse = s -> false;

    static final class Table {
        final Map<String, Chain> chains = new LinkedHashMap<>();
        final Map<String, FSet> sets = new LinkedHashMap<>();

        Table copy() {
            Table t = new Table();
            chains.forEach((k, v) -> t.chains.put(k, new Chain(v.hook, new ArrayList<>(v.rules), v.handle)));
            sets.forEach((k, v) -> t.sets.put(k, new FSet(v.declaration, new LinkedHashMap<>(v.elements), v.handle)));
            return t;
        }
    }

    record Chain(String hook, List<Rule> rules, long handle) {}

    record Rule(String body, String comment, long handle) {}

    /** {@code elements}: key to the element as written (a map element with its verdict). */
    record FSet(String declaration, Map<String, String> elements, long handle) {
        boolean map() {
            return declaration.contains(" : verdict");
        }

        boolean interval() {
            return declaration.contains("flags interval");
        }

        String type() {
            Matcher m = Pattern.compile("type ([^;:]+?)( : verdict)?;").matcher(declaration);
            if (!m.find()) {
                throw new IllegalStateException(declaration);
            }
            return m.group(1);
        }
    }

    private static final class Refused extends RuntimeException {
        Refused(String message) {
            super(message);
        }
    }

    @Override
    public CommandResult run(List<String> argv, String stdin, Duration timeout) {
        if (argv.equals(LIST)) {
            lists++;
            return table == null
                    ? new CommandResult(argv, 1, "", "Error: No such file or directory\nlist table inet npm_agent\n")
                    : new CommandResult(argv, 0, listing(), "");
        }
        if (argv.equals(LIST_CHAINS)) {
            return new CommandResult(argv, 0, table == null ? listing(List.of()) : listing(chainItems()), "");
        }
        if (argv.size() == LIST_MAP.size() + 1 && argv.subList(0, LIST_MAP.size()).equals(LIST_MAP)) {
            FSet map = table == null ? null : table.sets.get(argv.get(LIST_MAP.size()));
            return map == null || !map.map()
                    ? new CommandResult(argv, 1, "", "Error: No such file or directory\nlist map inet npm_agent\n")
                    : new CommandResult(argv, 0, listing(List.of(TABLE_JSON, setJson(argv.get(LIST_MAP.size()), map))), "");
        }
        if (!argv.equals(APPLY)) {
            throw new AssertionError("unexpected command " + argv);
        }
        scripts.add(stdin);
        if (refuse.test(stdin)) {
            return new CommandResult(argv, 1, "", "/dev/stdin:1:1-1: Error: Could not process rule: Invalid argument\n");
        }
        return execute(stdin);
    }

    /** Applies a script (the backend's, or a test's hand edit) as one transaction. */
    CommandResult execute(String script) {
        Table work = table == null ? null : table.copy();
        String[] lines = script.split("\n");
        for (int i = 0; i < lines.length; i++) {
            if (lines[i].isBlank()) {
                continue;
            }
            try {
                work = statement(work, lines[i]);
            } catch (Refused e) {
                return new CommandResult(APPLY, 1, "",
                        "/dev/stdin:" + (i + 1) + ":1-1: Error: " + e.getMessage() + "\n" + lines[i] + "\n");
            }
        }
        table = work;
        return new CommandResult(APPLY, 0, "", "");
    }

    @Override
    public boolean available(String program) {
        return true;
    }

    String last() {
        return scripts.isEmpty() ? null : scripts.get(scripts.size() - 1);
    }

    boolean tableExists() {
        return table != null;
    }

    /** A hand edit: deletes the {@code index}th rule of {@code chain}. */
    void deleteRule(String chain, int index) {
        table.chains.get(chain).rules().remove(index);
    }

    private Table statement(Table t, String line) {
        Matcher m = STATEMENT.matcher(line);
        if (!m.matches()) {
            throw new Refused("syntax error");
        }
        String verb = m.group(1);
        String kind = m.group(2);
        String name = m.group(3);
        String rest = m.group(4);
        if (kind.equals("table")) {
            if (verb.equals("add")) {
                return t == null ? new Table() : t;
            }
            if (t == null) {
                throw new Refused("Could not process rule: No such file or directory");
            }
            return null;
        }
        if (t == null) {
            throw new Refused("Could not process rule: No such file or directory");
        }
        if (name.equals("handle")) {
            name = byHandle(t, Long.parseLong(rest));
            rest = "";
        }
        switch (verb + " " + kind) {
            case "add chain":
                addChain(t, name, rest);
                break;
            case "flush chain":
                chain(t, name).rules().clear();
                break;
            case "delete chain":
                chain(t, name);
                if (referenced(t, "jump " + name)) {
                    throw new Refused("Could not process rule: Device or resource busy");
                }
                t.chains.remove(name);
                break;
            case "add set":
            case "add map":
                FSet there = t.sets.get(name);
                if (there != null && !there.declaration().equals(rest)) {
                    throw new Refused("Could not process rule: File exists");
                }
                if (there == null) {
                    t.sets.put(name, new FSet(rest, new LinkedHashMap<>(), ++handles));
                }
                break;
            case "delete set":
            case "delete map":
                set(t, name);
                if (referenced(t, "@" + name)) {
                    throw new Refused("Could not process rule: Device or resource busy");
                }
                t.sets.remove(name);
                break;
            case "add element":
                addElements(t, set(t, name), rest);
                break;
            case "delete element":
                FSet s = set(t, name);
                for (String key : elements(rest)) {
                    if (s.elements().remove(key) == null) {
                        throw new Refused("Could not process rule: No such file or directory");
                    }
                }
                break;
            case "add rule":
                addRule(t, name, rest);
                break;
            default:
                throw new Refused("syntax error");
        }
        return t;
    }

    private void addChain(Table t, String name, String spec) {
        String hook = spec.isEmpty() ? null : spec;
        Chain there = t.chains.get(name);
        if (there == null) {
            t.chains.put(name, new Chain(hook, new ArrayList<>(), ++handles));
        } else if (hook != null && (there.hook() == null || !withoutPolicy(there.hook()).equals(withoutPolicy(hook)))) {
            throw new Refused("Could not process rule: Operation not supported");
        }
    }

    private static String withoutPolicy(String hook) {
        return hook.replaceAll(" policy \\w+;", "");
    }

    private void addElements(Table t, FSet s, String rest) {
        for (String element : elements(rest)) {
            String key = NftElements.key(element);
            String there = s.elements().get(key);
            if (there != null && !there.equals(element)) {
                throw new Refused("Could not process rule: File exists");
            }
            if (s.map()) {
                String target = element.substring(element.indexOf(" : jump ") + " : jump ".length());
                chain(t, target);
            }
            s.elements().put(key, element);
        }
    }

    private void addRule(Table t, String chain, String text) {
        Chain c = chain(t, chain);
        Matcher m = COMMENT.matcher(text);
        String body = m.matches() ? m.group(1) : text;
        String comment = m.matches() ? m.group(2) : null;
        Matcher refs = Pattern.compile("@(\\w+)").matcher(body);
        while (refs.find()) {
            set(t, refs.group(1));
        }
        Matcher jump = Pattern.compile("jump (\\w+)").matcher(body);
        while (jump.find()) {
            chain(t, jump.group(1));
        }
        c.rules().add(new Rule(body, comment, ++handles));
    }

    private static List<String> elements(String braced) {
        String inner = braced.strip();
        if (!inner.startsWith("{ ") || !inner.endsWith(" }")) {
            throw new Refused("syntax error");
        }
        return List.of(inner.substring(2, inner.length() - 2).split(", "));
    }

    private static boolean referenced(Table t, String what) {
        Pattern p = Pattern.compile(Pattern.quote(what) + "\\b");
        for (Chain c : t.chains.values()) {
            for (Rule r : c.rules()) {
                if (p.matcher(r.body()).find()) {
                    return true;
                }
            }
        }
        for (FSet s : t.sets.values()) {
            for (String e : s.elements().values()) {
                if (p.matcher(e).find()) {
                    return true;
                }
            }
        }
        return false;
    }

    private static Chain chain(Table t, String name) {
        Chain c = t.chains.get(name);
        if (c == null) {
            throw new Refused("Could not process rule: No such file or directory");
        }
        return c;
    }

    private static FSet set(Table t, String name) {
        FSet s = t.sets.get(name);
        if (s == null) {
            throw new Refused("Could not process rule: No such file or directory");
        }
        return s;
    }

    private static String byHandle(Table t, long handle) {
        for (Map.Entry<String, Chain> e : t.chains.entrySet()) {
            if (e.getValue().handle() == handle) {
                return e.getKey();
            }
        }
        for (Map.Entry<String, FSet> e : t.sets.entrySet()) {
            if (e.getValue().handle() == handle) {
                return e.getKey();
            }
        }
        throw new Refused("Could not process rule: No such file or directory");
    }

    // ---- listing, in nft's JSON shapes ------------------------------------------------------------------

    private static final String TABLE_JSON = "{\"table\": {\"family\": \"inet\", \"name\": \"npm_agent\", \"handle\": 1}}";

    String listing() {
        List<String> items = new ArrayList<>();
        items.add(TABLE_JSON);
        table.sets.forEach((name, s) -> items.add(setJson(name, s)));
        items.addAll(chainItems());
        table.chains.forEach((name, c) -> c.rules().forEach(r -> items.add(
                "{\"rule\": {\"family\": \"inet\", \"table\": \"npm_agent\", \"chain\": " + str(name) + ", \"handle\": " + r.handle()
                        + (r.comment() == null ? "" : ", \"comment\": " + str(r.comment()))
                        + ", \"expr\": [{\"accept\": null}]}}")));
        return listing(items);
    }

    private static String listing(List<String> items) {
        List<String> all = new ArrayList<>();
        all.add("{\"metainfo\": {\"version\": \"1.0.6\", \"json_schema_version\": 1}}");
        all.addAll(items);
        return "{\"nftables\": [" + String.join(", ", all) + "]}";
    }

    /** The table's chains with their hooks, without rules (as {@code list chains} shows them). */
    private List<String> chainItems() {
        List<String> items = new ArrayList<>();
        table.chains.forEach((name, c) -> {
            StringBuilder sb = new StringBuilder("{\"chain\": {\"family\": \"inet\", \"table\": \"npm_agent\", \"name\": ")
                    .append(str(name)).append(", \"handle\": ").append(c.handle());
            if (c.hook() != null) {
                Matcher m = Pattern.compile("type (\\w+) hook (\\w+) priority (-?\\d+); policy (\\w+);").matcher(c.hook());
                if (!m.find()) {
                    throw new IllegalStateException(c.hook());
                }
                sb.append(", \"type\": ").append(str(m.group(1))).append(", \"hook\": ").append(str(m.group(2)))
                        .append(", \"prio\": ").append(m.group(3)).append(", \"policy\": ").append(str(m.group(4)));
            }
            items.add(sb.append("}}").toString());
        });
        return items;
    }

    private static String setJson(String name, FSet s) {
        String type = s.type();
        String typeJson = type.contains(" . ")
                ? "[" + String.join(", ", List.of(type.split(" \\. ")).stream().map(FakeNft::str).toList()) + "]"
                : str(type);
        StringBuilder sb = new StringBuilder("{\"").append(s.map() ? "map" : "set").append("\": {\"family\": \"inet\", \"name\": ")
                .append(str(name)).append(", \"table\": \"npm_agent\", \"type\": ").append(typeJson)
                .append(", \"handle\": ").append(s.handle());
        if (s.map()) {
            sb.append(", \"map\": \"verdict\"");
        }
        if (s.interval()) {
            sb.append(", \"flags\": [\"interval\"]");
        }
        if (!s.elements().isEmpty()) {
            List<String> elems = new ArrayList<>();
            for (String e : s.elements().values()) {
                elems.add(elementJson(s, e));
            }
            sb.append(", \"elem\": [").append(String.join(", ", elems)).append("]");
        }
        return sb.append("}}").toString();
    }

    private static String elementJson(FSet s, String e) {
        if (s.map()) {
            int colon = e.indexOf(" : jump ");
            return "[" + str(e.substring(0, colon)) + ", {\"jump\": {\"target\": " + str(e.substring(colon + 8)) + "}}]";
        }
        if (e.contains(" . ")) {
            String[] p = e.split(" \\. ");
            return "{\"concat\": [" + str(p[0]) + ", " + str(p[1]) + ", " + p[2] + "]}";
        }
        int slash = e.indexOf('/');
        if (slash > 0) {
            return "{\"prefix\": {\"addr\": " + str(e.substring(0, slash)) + ", \"len\": " + e.substring(slash + 1) + "}}";
        }
        return str(e);
    }

    private static String str(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
    }
}
