package io.npmagent.harness.process;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The end of a log file, for the message that says why something did not come up. */
public final class Logs {
    private Logs() {}

    public static String tail(Path log, int lines) {
        try {
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException | java.io.UncheckedIOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }
}
