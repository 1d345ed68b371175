package io.npmagent.pipelines.upstream;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Every probe round of a cyclonus {@code --noisy} log: per case and step, the table cyclonus expected and the
 * table each try got, with the time the try ran, and the pods' addresses from the log's resources table.
 *
 * <p>The log interleaves two streams. While a case runs, logrus lines carry times ("step 1: waiting 5 seconds",
 * "running kube probe on try 1"); once it has run, the printer writes its tables without times
 * ("evaluating test case: NAME", "step 1 on ...:", "Expected combined:", "kube results, try 0:"). A try's
 * window is from its "running kube probe" line to the next timed line (the next try, the next step or the next
 * case's reset), each to the second, as logrus writes them.
 */
final class CyclonusRounds {
    /** One probe: from pod, to pod ("x/a"), and "TCP/80". */
    record Cell(String from, String to, String port) {
        @Override
        public String toString() {
            return from + " -> " + to + " " + port;
        }
    }

    /**
     * One try of one step. {@code got} and {@code expected}: '.' connected, 'X' blocked (cyclonus' marks; others,
     * such as a failed check, kept as printed). {@code end} is the next timed line's second, or null at the log's end.
     */
    record Round(String caseName, int step, int attempt, Instant start, Instant end, Map<Cell, Character> got,
            Map<Cell, Character> expected) {}

    private static final Pattern TIMED = Pattern.compile("^time=\"([^\"]+)\" level=\\w+ msg=\"(.*)\"$");
    private static final Pattern STARTING = Pattern.compile("^starting test case #\\d+");
    private static final Pattern WAITING = Pattern.compile("^step \\d+: waiting");
    private static final Pattern PROBING = Pattern.compile("^running kube probe on try (\\d+)");
    /** An address in the IPS column (IPv4 or IPv6: it has a dot or a colon), not some other table's "pod: a". */
    private static final Pattern ADDRESS = Pattern.compile("^pod: ([0-9a-fA-F]*[.:][0-9a-fA-F.:]*)$");

    private final List<Round> rounds;
    private final Map<String, String> addresses;

    private CyclonusRounds(List<Round> rounds, Map<String, String> addresses) {
        this.rounds = rounds;
        this.addresses = addresses;
    }

    List<Round> rounds() {
        return rounds;
    }

    /** "x/a" to its address, as the log's resources table lists it; pods made later in a case are not there. */
    Map<String, String> addresses() {
        return addresses;
    }

    static CyclonusRounds parse(List<String> lines) {
        Map<String, String> addresses = new LinkedHashMap<>();
        // A try's end is the next timed line, which may come after its tables: each printed round keeps its
        // window, filled in as the log goes, and becomes a Round at the end.
        record Printed(Round round, Instant[] window) {}
        List<Printed> printed = new ArrayList<>();
        // Run order of the current case: per step, each try's [start, end].
        List<List<Instant[]>> timedSteps = new ArrayList<>();
        Instant[] open = null;
        String caseName = null;
        int step = 0;
        Map<Cell, Character> expected = Map.of();
        String namespace = "";
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            Matcher timed = TIMED.matcher(line);
            if (timed.matches()) {
                Instant at = Instant.parse(timed.group(1));
                if (open != null) {
                    open[1] = at;
                    open = null;
                }
                String msg = timed.group(2);
                Matcher probing = PROBING.matcher(msg);
                if (WAITING.matcher(msg).find()) {
                    timedSteps.add(new ArrayList<>());
                } else if (probing.find() && !timedSteps.isEmpty()) {
                    open = new Instant[] {at, null};
                    timedSteps.get(timedSteps.size() - 1).add(open);
                }
                continue;
            }
            if (STARTING.matcher(line).find()) {
                timedSteps = new ArrayList<>();
                caseName = null;
            } else if (line.startsWith(CyclonusLog.CASE)) {
                caseName = line.substring(CyclonusLog.CASE.length()).strip();
            } else if (caseName != null && CyclonusLog.STEP.matcher(line).matches()) {
                Matcher m = CyclonusLog.STEP.matcher(line);
                m.matches();
                step = Integer.parseInt(m.group(1));
                expected = Map.of();
            } else if (caseName != null && line.equals("Expected combined:")) {
                expected = readTable(lines, i + 1);
            } else if (caseName != null && CyclonusLog.TRY.matcher(line).matches()) {
                Matcher m = CyclonusLog.TRY.matcher(line);
                m.matches();
                int attempt = Integer.parseInt(m.group(1));
                Instant[] window = step >= 1 && step <= timedSteps.size() && attempt < timedSteps.get(step - 1).size()
                        ? timedSteps.get(step - 1).get(attempt) : new Instant[] {null, null};
                printed.add(new Printed(new Round(caseName, step, attempt, null, null, readTable(lines, i + 1), expected), window));
            } else if (line.startsWith("|")) {
                // The resources table: | NAMESPACE | NS LABELS | POD | POD LABELS | IPS | CONTAINERS/PORTS |,
                // the namespace only on its first row.
                String[] cols = line.split("\\|", -1);
                if (cols.length >= 7) {
                    if (!cols[1].isBlank()) {
                        namespace = cols[1].strip();
                    }
                    Matcher address = ADDRESS.matcher(cols[5].strip());
                    if (address.matches() && !cols[3].isBlank()) {
                        addresses.put(namespace + "/" + cols[3].strip(), address.group(1));
                    }
                }
            }
        }
        List<Round> rounds = printed.stream().map(p -> new Round(p.round().caseName(), p.round().step(), p.round().attempt(),
                p.window()[0], p.window()[1], p.round().got(), p.round().expected())).toList();
        return new CyclonusRounds(rounds, addresses);
    }

    /**
     * A probe table from its first "+---" line: header rows name the destinations (first row) and the
     * protocol/ports (first column, one per row); then a row per source, each cell one mark per protocol/port.
     */
    private static Map<Cell, Character> readTable(List<String> lines, int from) {
        Map<Cell, Character> out = new LinkedHashMap<>();
        if (from >= lines.size() || !lines.get(from).startsWith("+")) {
            return out;
        }
        List<String> destinations = new ArrayList<>();
        List<String> ports = new ArrayList<>();
        int i = from + 1;
        for (; i < lines.size() && lines.get(i).startsWith("|"); i++) {
            String[] cols = cells(lines.get(i));
            ports.add(cols[0]);
            if (destinations.isEmpty()) {
                for (int c = 1; c < cols.length; c++) {
                    destinations.add(cols[c].toLowerCase());
                }
            }
        }
        for (i++; i < lines.size() && (lines.get(i).startsWith("|") || lines.get(i).startsWith("+")); i++) {
            if (lines.get(i).startsWith("+")) {
                continue;
            }
            String[] cols = cells(lines.get(i));
            for (int c = 1; c < cols.length && c - 1 < destinations.size(); c++) {
                String[] marks = cols[c].split("\\s+");
                for (int p = 0; p < marks.length && p < ports.size(); p++) {
                    if (!marks[p].isEmpty()) {
                        out.put(new Cell(cols[0], destinations.get(c - 1), ports.get(p)), marks[p].charAt(0));
                    }
                }
            }
        }
        return out;
    }

    private static String[] cells(String row) {
        String inner = row.strip();
        inner = inner.substring(1, inner.endsWith("|") ? inner.length() - 1 : inner.length());
        String[] cols = inner.split("\\|", -1);
        for (int c = 0; c < cols.length; c++) {
            cols[c] = cols[c].strip();
        }
        return cols;
    }
}
