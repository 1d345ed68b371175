package io.npmagent.agent.cli;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the reachability matrix back out of {@code compile}'s output, so tests can ask for one cell
 * ({@code cell("IPv4", "TCP/5432", "shop/api", "data/db")}) the way a person reads the table.
 */
final class Matrix {
    private static final Pattern LEGEND = Pattern.compile("^\\s+(\\d+) (\\S+)\\s+\\S.*$");
    private static final Pattern HEADER = Pattern.compile("^(IPv[46]) (\\S+)\\s+((?:\\s*\\d+)+)$");
    private static final Pattern ROW = Pattern.compile("^\\s+(\\d+) (\\S+)\\s+([.X-](?: [.X-])*)$");

    private final Map<String, Character> cells = new HashMap<>();

    Matrix(String output) {
        String[] lines = output.substring(output.indexOf("# reachability")).split("\n");
        Map<String, String> names = new HashMap<>();
        String block = null;
        List<String> columns = List.of();
        for (int i = 1; i < lines.length; i++) {
            String line = lines[i];
            Matcher header = HEADER.matcher(line);
            Matcher row = ROW.matcher(line);
            if (header.matches()) {
                block = header.group(1) + " " + header.group(2);
                columns = List.of(header.group(3).trim().split("\\s+"));
            } else if (block != null && row.matches()) {
                String[] marks = row.group(3).split(" ");
                for (int c = 0; c < marks.length; c++) {
                    cells.put(block + " " + row.group(2) + " " + names.get(columns.get(c)), marks[c].charAt(0));
                }
            } else if (block == null) {
                Matcher legend = LEGEND.matcher(line);
                if (legend.matches()) {
                    names.put(legend.group(1), legend.group(2));
                }
            }
        }
    }

    /** The mark for one pair, or null when the table has no such cell. */
    Character cell(String family, String port, String from, String to) {
        return cells.get(family + " " + port + " " + from + " " + to);
    }

    int size() {
        return cells.size();
    }
}
