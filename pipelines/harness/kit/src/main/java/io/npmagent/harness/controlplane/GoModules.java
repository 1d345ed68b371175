package io.npmagent.harness.controlplane;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Our build modules' upstream pins ({@code pipelines/upstream/<name>/go.mod}, each requiring one published
 * module on a line of its own) and what those modules publish besides binaries (CRDs), fetched through Go's
 * own module cache from the Go module proxy, as {@code pipelines/kube-binaries} fetches them to build.
 */
public final class GoModules {
    private static final Pattern DIR = Pattern.compile("\"Dir\":\\s*\"([^\"]+)\"");

    private GoModules() {}

    /** The version of {@code module} a go.mod requires on a line of its own. */
    public static String required(String goMod, String module) {
        Matcher m = Pattern.compile("(?m)^require\\s+" + Pattern.quote(module) + "\\s+(\\S+)").matcher(goMod);
        if (!m.find()) {
            throw new IllegalStateException("no version in go.mod's require " + module + ": " + goMod);
        }
        return m.group(1);
    }

    /** Where Go's module cache holds {@code module} at the version {@code buildModule}'s go.mod pins, fetched first if needed. */
    public static Path dir(Path buildModule, String module) throws IOException {
        String version = required(Files.readString(buildModule.resolve("go.mod")), module);
        Process p = new ProcessBuilder("go", "mod", "download", "-json", module + "@" + version)
                .directory(buildModule.toFile())
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (p.waitFor() != 0) {
                throw new IOException("go mod download " + module + "@" + version + " failed (exit " + p.exitValue() + "): " + out.strip());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while fetching " + module, e);
        }
        Matcher m = DIR.matcher(out);
        if (!m.find()) {
            throw new IOException("go mod download -json gave no Dir for " + module + ": " + out.strip());
        }
        return Path.of(m.group(1));
    }
}
