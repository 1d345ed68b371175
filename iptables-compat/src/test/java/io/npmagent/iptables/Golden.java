package io.npmagent.iptables;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Golden files under {@code src/test/resources/golden}: the exact text a renderer produces, reviewed
 * as a diff. {@code -Dgolden.update=true} rewrites them instead of comparing.
 */
public final class Golden {
    private static final Path ROOT = Path.of("src/test/resources/golden");

    private Golden() {}

    public static void assertMatches(String name, String actual) {
        Path file = ROOT.resolve(name);
        try {
            if (Boolean.getBoolean("golden.update")) {
                Files.createDirectories(file.getParent());
                Files.writeString(file, actual);
                return;
            }
            assertThat(Files.exists(file)).as("golden file %s (create it with -Dgolden.update=true)", file).isTrue();
            assertThat(actual).as("golden file %s (review, then -Dgolden.update=true)", file).isEqualTo(Files.readString(file));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
