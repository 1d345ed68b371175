package io.npmagent.iptables;

import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.CommandRunner;
import io.npmagent.iptables.detect.IptablesVariant;
import io.npmagent.iptables.model.Family;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code iptables-restore}, {@code iptables-save}, {@code iptables -S} (both families, one variant) and
 * {@code ipset save | list -n | restore} in memory, for the inputs the backend writes, with the kernel's
 * checks where the backend depends on them:
 * <ul>
 *   <li>a restore is one transaction per table: every line passes, or nothing changed;</li>
 *   <li>a rule may only jump to a chain that exists and name sets that exist, and only through the
 *       matches the kernel has; {@code -D} needs the rule; {@code -X} needs an empty chain nothing jumps
 *       to; declaring a chain creates or flushes it;</li>
 *   <li>{@code ipset restore} applies line by line and stops at the first refusal (what came before
 *       stays); a set a rule names cannot be destroyed.</li>
 * </ul>
 * Rules are kept as written, so a save prints them back verbatim (the real tools respell; the backend
 * compares only its hash comments). Kernel tests check the same against the real tools.
 */
public final class FakeIptables implements CommandRunner {
    private static final Set<String> MATCHES = Set.of("addrtype", "comment", "conntrack", "mark", "set", "tcp", "udp", "sctp", "limit");
    private static final Set<String> TARGETS = Set.of("ACCEPT", "DROP", "RETURN", "MARK", "REJECT", "SET", "NFLOG");
    private static final List<String> BUILTIN = List.of("INPUT", "FORWARD", "OUTPUT");
    private static final Pattern TARGET = Pattern.compile("(?:^| )-[jg] (\\S+)");
    private static final Pattern MATCH = Pattern.compile("(?:^| )-m (\\S+)");
    private static final Pattern MATCH_SET = Pattern.compile("--(?:match|add)-set (\\S+)");

    private final IptablesVariant variant;
    private final Map<Family, Map<String, List<String>>> tables = new EnumMap<>(Family.class);
    /** Set name to its {@code create} arguments after the name, and its members as written. */
    private final Map<String, IpSet> sets = new LinkedHashMap<>();

    private record IpSet(String declaration, Set<String> members) {}

    public FakeIptables(IptablesVariant variant) {
        this.variant = variant;
        for (Family f : Family.values()) {
            Map<String, List<String>> t = new LinkedHashMap<>();
            BUILTIN.forEach(c -> t.put(c, new ArrayList<>()));
            tables.put(f, t);
        }
    }

    @Override
    public synchronized CommandResult run(List<String> argv, String stdin, Duration timeout) {
        for (Family f : Family.values()) {
            if (argv.equals(List.of(variant.save(f), "-t", "filter"))) {
                return ok(argv, save(f));
            }
            if (argv.size() == 4 && argv.get(0).equals(variant.restore(f)) && argv.get(1).equals("--noflush")) {
                return restore(argv, f, stdin);
            }
            if (argv.size() == 7 && argv.get(0).equals(variant.command(f)) && argv.get(5).equals("-S")) {
                return listChain(argv, f, argv.get(6));
            }
        }
        if (argv.equals(List.of("ipset", "save"))) {
            StringBuilder out = new StringBuilder();
            sets.forEach((name, s) -> {
                out.append("create ").append(name).append(' ').append(s.declaration()).append('\n');
                s.members().forEach(m -> out.append("add ").append(name).append(' ').append(m).append('\n'));
            });
            return ok(argv, out.toString());
        }
        if (argv.size() == 3 && argv.subList(0, 2).equals(List.of("ipset", "save"))) {
            IpSet s = sets.get(argv.get(2));
            if (s == null) {
                return new CommandResult(argv, 1, "", "ipset v7.17: The set with the given name does not exist\n");
            }
            StringBuilder out = new StringBuilder("create " + argv.get(2) + " " + s.declaration() + "\n");
            s.members().forEach(m -> out.append("add ").append(argv.get(2)).append(' ').append(m).append('\n'));
            return ok(argv, out.toString());
        }
        if (argv.equals(List.of("ipset", "list", "-n"))) {
            StringBuilder out = new StringBuilder();
            sets.keySet().forEach(n -> out.append(n).append('\n'));
            return ok(argv, out.toString());
        }
        if (argv.equals(List.of("ipset", "restore"))) {
            return ipsetRestore(argv, stdin);
        }
        throw new AssertionError("unexpected command " + argv);
    }

    @Override
    public boolean available(String program) {
        return true;
    }

    private static CommandResult ok(List<String> argv, String stdout) {
        return new CommandResult(argv, 0, stdout, "");
    }

    private String save(Family f) {
        StringBuilder out = new StringBuilder("# Generated by the fake\n*filter\n");
        tables.get(f).keySet().forEach(c -> out.append(':').append(c).append(BUILTIN.contains(c) ? " ACCEPT" : " -").append(" [0:0]\n"));
        tables.get(f).forEach((c, rules) -> rules.forEach(r -> out.append("-A ").append(c).append(' ').append(r).append('\n')));
        return out.append("COMMIT\n").toString();
    }

    private CommandResult listChain(List<String> argv, Family f, String chain) {
        List<String> rules = tables.get(f).get(chain);
        if (rules == null) {
            return new CommandResult(argv, 1, "", "iptables: No chain/target/match by that name.\n");
        }
        StringBuilder out = new StringBuilder(BUILTIN.contains(chain) ? "-P " + chain + " ACCEPT\n" : "-N " + chain + "\n");
        rules.forEach(r -> out.append("-A ").append(chain).append(' ').append(r).append('\n'));
        return ok(argv, out.toString());
    }

    // ---- iptables-restore --noflush ------------------------------------------------------------------

    private static final class Refused extends RuntimeException {
        Refused(String message) {
            super(message);
        }
    }

    private CommandResult restore(List<String> argv, Family f, String input) {
        Map<String, List<String>> work = new LinkedHashMap<>();
        tables.get(f).forEach((c, rules) -> work.put(c, new ArrayList<>(rules)));
        String[] lines = input.split("\n");
        for (int i = 0; i < lines.length; i++) {
            try {
                line(work, lines[i]);
            } catch (Refused e) {
                return new CommandResult(argv, 2, "", argv.get(0) + ": " + e.getMessage() + "\nError occurred at line: " + (i + 1) + "\n");
            }
        }
        tables.put(f, work);
        return ok(argv, "");
    }

    private void line(Map<String, List<String>> t, String line) {
        if (line.isBlank() || line.startsWith("#") || line.equals("*filter") || line.equals("COMMIT")) {
            return;
        }
        if (line.startsWith(":")) {
            String chain = line.substring(1).split(" ")[0];
            if (!BUILTIN.contains(chain)) {
                t.computeIfAbsent(chain, c -> new ArrayList<>()).clear(); // declaring flushes
            }
            return;
        }
        String[] op = line.split(" ", 3);
        String chain = op.length > 1 ? op[1] : "";
        List<String> rules = t.get(chain);
        if (rules == null) {
            throw new Refused("Chain '" + chain + "' does not exist");
        }
        switch (op[0]) {
            case "-A" -> rules.add(checked(t, op[2]));
            case "-I" -> {
                String[] posAndSpec = op[2].split(" ", 2);
                rules.add(Integer.parseInt(posAndSpec[0]) - 1, checked(t, posAndSpec[1]));
            }
            case "-D" -> {
                if (op[2].matches("\\d+")) {
                    int n = Integer.parseInt(op[2]);
                    if (n < 1 || n > rules.size()) {
                        throw new Refused("Index of deletion too big");
                    }
                    rules.remove(n - 1);
                } else if (!rules.remove(op[2])) {
                    throw new Refused("Bad rule (does a matching rule exist in that chain?)");
                }
            }
            case "-X" -> {
                if (!rules.isEmpty()) {
                    throw new Refused("Directory not empty");
                }
                boolean referenced = t.values().stream().flatMap(List::stream).anyMatch(r -> target(r).equals(chain));
                if (referenced || BUILTIN.contains(chain)) {
                    throw new Refused("Too many links");
                }
                t.remove(chain);
            }
            default -> throw new Refused("unknown command " + op[0]);
        }
    }

    /** A rule's spec, if the kernel would take it. */
    private String checked(Map<String, List<String>> t, String spec) {
        Matcher m = MATCH.matcher(spec);
        while (m.find()) {
            if (!MATCHES.contains(m.group(1))) {
                throw new Refused("Couldn't load match `" + m.group(1) + "':No such file or directory");
            }
        }
        Matcher s = MATCH_SET.matcher(spec);
        while (s.find()) {
            if (!sets.containsKey(s.group(1))) {
                throw new Refused("Set " + s.group(1) + " doesn't exist.");
            }
        }
        String target = target(spec);
        if (!target.isEmpty() && !TARGETS.contains(target) && !t.containsKey(target)) {
            throw new Refused("Couldn't load target `" + target + "':No such file or directory");
        }
        return spec;
    }

    private static String target(String spec) {
        Matcher m = TARGET.matcher(spec.replaceAll("\"[^\"]*\"", "\"\""));
        return m.find() ? m.group(1) : "";
    }

    // ---- ipset restore -------------------------------------------------------------------------------

    private CommandResult ipsetRestore(List<String> argv, String input) {
        String[] lines = input.split("\n");
        for (int i = 0; i < lines.length; i++) {
            String l = lines[i].strip();
            if (l.isEmpty()) {
                continue;
            }
            String[] f = l.replace(" -exist", "").split(" ", 3);
            String error = null;
            IpSet set = sets.get(f[1]);
            switch (f[0]) {
                case "create" -> {
                    if (set == null) {
                        sets.put(f[1], new IpSet(f[2], new LinkedHashSet<>()));
                    } else if (!l.endsWith(" -exist")) {
                        error = "Set cannot be created: set with the same name already exists";
                    }
                }
                case "add", "del" -> {
                    if (set == null) {
                        error = "The set with the given name does not exist";
                    } else if (f[0].equals("add")) {
                        set.members().add(f[2]);
                    } else {
                        set.members().remove(f[2]);
                    }
                }
                case "destroy" -> {
                    if (set == null) {
                        error = "The set with the given name does not exist";
                    } else if (named(f[1])) {
                        error = "Set cannot be destroyed: it is in use by a kernel component";
                    } else {
                        sets.remove(f[1]);
                    }
                }
                default -> error = "unknown command " + f[0];
            }
            if (error != null) { // ipset stops here; what came before stays
                return new CommandResult(argv, 1, "", "ipset v7.17: Error in line " + (i + 1) + ": " + error + "\n");
            }
        }
        return ok(argv, "");
    }

    private boolean named(String set) {
        return tables.values().stream().flatMap(t -> t.values().stream()).flatMap(List::stream)
                .anyMatch(r -> r.contains("--match-set " + set + " ") || r.contains("--add-set " + set + " "));
    }
}
