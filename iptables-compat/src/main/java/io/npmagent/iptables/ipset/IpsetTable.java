package io.npmagent.iptables.ipset;

import io.npmagent.dataplane.backend.DeltaTracker;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.iptables.model.Family;
import io.npmagent.iptables.model.Member;
import io.npmagent.iptables.model.Names;
import io.npmagent.iptables.model.NetfilterModel;
import io.npmagent.iptables.model.SetId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The agent's ipsets: what the kernel holds (as last read back or written) and the {@code ipset
 * restore} input that makes it hold what the model wants.
 *
 * <p>A plan has two phases, run around the iptables-restore: first sets are created and members
 * added and deleted (so every set a new rule names exists, full, before the rule), last sets no rule
 * names any more are destroyed. Adds and deletes carry {@code -exist}, so a stale belief about one
 * member never fails a batch. Members are compared as this class spells them, and what the kernel
 * prints is parsed back into the same spelling, so formatting never looks like drift.
 */
public final class IpsetTable {
    /** A set of 100,000 pods in one namespace selector must fit; memory grows with entries, not with this. */
    static final int MAX_ELEMENTS = 1 << 20;

    /** The agent's sets in the kernel, each with its members. */
    private final Map<String, DeltaTracker<String, Boolean>> actual = new HashMap<>();

    /** What to send: phase one (creates, adds, deletes) and phase three (destroys), and what they do to {@code actual}. */
    public record Plan(List<String> prepare, List<String> destroy, Map<String, Set<String>> created,
            Map<String, DeltaTracker.Delta<String, Boolean>> members, List<String> destroyed) {
        public boolean isEmpty() {
            return prepare.isEmpty() && destroy.isEmpty();
        }

        public String prepareInput() {
            return String.join("\n", prepare) + "\n";
        }

        public String destroyInput() {
            return String.join("\n", destroy) + "\n";
        }
    }

    /**
     * The changes that bring {@code sets} (and, for sets in {@code members}, just those members) to
     * what {@code model} wants; {@code full} compares every member of every set, ours in the kernel
     * included (reconcile).
     */
    public Plan plan(NetfilterModel model, Set<SetId> sets, Map<SetId, Set<Member>> members, boolean full) {
        List<String> prepare = new ArrayList<>();
        List<String> destroy = new ArrayList<>();
        Map<String, Set<String>> created = new HashMap<>();
        Map<String, DeltaTracker.Delta<String, Boolean>> changed = new HashMap<>();
        List<String> destroyed = new ArrayList<>();

        Set<SetId> touched = new HashSet<>(sets);
        touched.addAll(members.keySet());
        if (full) {
            touched.addAll(model.sets());
        }
        Set<String> wantedNames = new HashSet<>();
        TreeMap<String, SetId> byName = new TreeMap<>(); // a stable order: inputs are compared as golden files
        touched.forEach(set -> byName.put(Names.ipset(set), set));
        for (SetId set : byName.values()) {
            String name = Names.ipset(set);
            boolean want = model.exists(set);
            DeltaTracker<String, Boolean> have = actual.get(name);
            if (want) {
                wantedNames.add(name);
            }
            if (want && have == null) {
                Set<String> content = texts(model.members(set));
                prepare.add("create " + name + " " + type(set) + " family " + family(set.family())
                        + " hashsize 1024 maxelem " + MAX_ELEMENTS + " -exist");
                content.forEach(m -> prepare.add("add " + name + " " + m + " -exist"));
                created.put(name, content);
            } else if (want) {
                Set<String> wantMembers;
                Set<String> consider;
                if (full) {
                    wantMembers = texts(model.members(set));
                    consider = new TreeSet<>(wantMembers);
                    consider.addAll(have.view().keySet());
                } else {
                    wantMembers = new HashSet<>();
                    consider = new TreeSet<>();
                    for (Member m : members.getOrDefault(set, Set.of())) {
                        consider.add(text(m));
                        if (model.holds(set, m)) {
                            wantMembers.add(text(m));
                        }
                    }
                }
                DeltaTracker.Delta<String, Boolean> delta = have.delta(consider,
                        m -> wantMembers.contains(m) ? DeltaTracker.PRESENT : null);
                for (String m : consider) { // in one sorted order: inputs are compared as golden files
                    if (delta.updates().containsKey(m)) {
                        prepare.add("add " + name + " " + m + " -exist");
                    } else if (delta.deletions().contains(m)) {
                        prepare.add("del " + name + " " + m + " -exist");
                    }
                }
                if (!delta.isEmpty()) {
                    changed.put(name, delta);
                }
            } else if (have != null) {
                destroy.add("destroy " + name);
                destroyed.add(name);
            }
        }
        if (full) {
            for (String name : new TreeSet<>(actual.keySet())) {
                if (!wantedNames.contains(name) && !destroyed.contains(name)) {
                    destroy.add("destroy " + name);
                    destroyed.add(name);
                }
            }
        }
        return new Plan(prepare, destroy, created, changed, destroyed);
    }

    /** Records that phase one of {@code plan} is in the kernel. */
    public void preparedOk(Plan plan) {
        plan.created().forEach((name, content) -> actual.put(name, DeltaTracker.ofElements(content)));
        plan.members().forEach((name, delta) -> actual.get(name).landed(delta));
    }

    /** Records that phase three of {@code plan} is in the kernel. */
    public void destroyedOk(Plan plan) {
        plan.destroyed().forEach(actual::remove);
    }

    /** Replaces what is known with {@code ipset save} output (only the agent's sets are kept). */
    public void load(String save) {
        actual.clear();
        Map<String, String> types = new HashMap<>();
        Map<String, Set<String>> read = new HashMap<>();
        for (String line : save.split("\n")) {
            String[] f = line.strip().split("\\s+", 3);
            if (f.length < 2 || !f[1].startsWith(Names.SET_PREFIX) || IpsetFlowSets.isFlowSet(f[1])) { // the kernel fills those
                continue;
            }
            if (f[0].equals("create") && f.length == 3) {
                types.put(f[1], f[2].split("\\s+")[0]);
                read.put(f[1], new HashSet<>());
            } else if (f[0].equals("add") && f.length == 3 && read.containsKey(f[1])) {
                read.get(f[1]).add(canonical(types.get(f[1]), f[2].strip()));
            }
        }
        read.forEach((name, members) -> actual.put(name, DeltaTracker.ofElements(members)));
    }

    /** Names of the agent's sets the kernel holds. */
    public Set<String> names() {
        return new TreeSet<>(actual.keySet());
    }

    public long entries() {
        return actual.values().stream().mapToLong(DeltaTracker::size).sum();
    }

    public int count() {
        return actual.size();
    }

    static String type(SetId set) {
        if (set instanceof SetId.Selector) {
            return "hash:ip";
        }
        if (set instanceof SetId.Cidr) {
            return "hash:net";
        }
        return "hash:ip,port";
    }

    private static String family(Family f) {
        return f == Family.IPV4 ? "inet" : "inet6";
    }

    private static Set<String> texts(Set<Member> members) {
        Set<String> out = new TreeSet<>();
        members.forEach(m -> out.add(text(m)));
        return out;
    }

    /** A member as {@code ipset save} prints it. */
    static String text(Member m) {
        if (m instanceof Member.Host h) {
            return h.ip().toString();
        }
        if (m instanceof Member.Net n) {
            Cidr c = n.cidr();
            String prefix = c.prefixLength() == c.network().bitLength() ? c.network().toString() : c.toString();
            return n.excluded() ? prefix + " nomatch" : prefix;
        }
        Member.HostPort hp = (Member.HostPort) m;
        return hp.ip() + "," + hp.protocol().name().toLowerCase(Locale.ROOT) + ":" + hp.port();
    }

    /** What the kernel printed, in this class's spelling; text it cannot read is kept as printed. */
    static String canonical(String type, String printed) {
        try {
            if ("hash:ip".equals(type)) {
                return text(new Member.Host(IpAddress.parse(printed)));
            }
            if ("hash:net".equals(type)) {
                boolean nomatch = printed.endsWith(" nomatch");
                String net = nomatch ? printed.substring(0, printed.length() - " nomatch".length()).strip() : printed;
                Cidr cidr = net.contains("/") ? Cidr.parse(net) : Cidr.host(IpAddress.parse(net));
                return text(new Member.Net(cidr, nomatch));
            }
            if ("hash:ip,port".equals(type)) {
                int comma = printed.indexOf(',');
                int colon = printed.lastIndexOf(':');
                IpAddress ip = IpAddress.parse(printed.substring(0, comma));
                Protocol protocol = Protocol.valueOf(printed.substring(comma + 1, colon).toUpperCase(Locale.ROOT));
                return text(new Member.HostPort(ip, protocol, Integer.parseInt(printed.substring(colon + 1))));
            }
        } catch (RuntimeException e) {
            // Not something this agent writes; keep it as printed, so a full plan deletes it by that text.
        }
        return printed;
    }
}
