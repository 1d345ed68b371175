package io.npmagent.pipelines.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** A temporary directory (a benchmark point's manifests) removed with everything in it on close. */
public record TempDir(Path path) implements AutoCloseable {

    public static TempDir create(String prefix) throws IOException {
        return new TempDir(Files.createTempDirectory(prefix));
    }

    @Override
    public void close() {
        try (Stream<Path> files = Files.walk(path)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            System.err.println("bench: cannot remove " + path + ": " + e.getMessage());
        }
    }
}
