package io.npmagent.iptables.exec;

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
        String[] lines = text.strip().split("\n");
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < Math.min(lines.length, 5); i++) {
            sb.append(i == 0 ? "" : " | ").append(lines[i].strip());
        }
        return argv.get(0) + " exited " + exitCode + (sb.length() == 0 ? "" : ": " + sb);
    }
}
