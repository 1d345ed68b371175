package io.npmagent.dataplane.exec;

import java.util.List;

/** How a process ended: its argv, exit code, and what it printed. */
public record CommandResult(List<String> argv, int exitCode, String stdout, String stderr) {
    public CommandResult {
        argv = List.copyOf(argv);
    }

    public boolean ok() {
        return exitCode == 0;
    }

    /** The first lines of stderr, for an error message: the tool's own words about what it refused. */
    public String errorSummary() {
        String text = stderr.isBlank() ? stdout : stderr;
        List<String> lines = text.strip().lines().map(String::strip).filter(l -> !l.isEmpty()).limit(5).toList();
        String sb = String.join(" | ", lines);
        return argv.get(0) + " exited " + exitCode + (sb.isEmpty() ? "" : ": " + sb);
    }
}
