package io.npmagent.iptables.nft;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Golden files under {@code src/test/resources/golden/nft/}: the exact nft script a case renders.
 * Run with {@code -Dgolden.update=true} to rewrite them, then review the diff.
 */
final class Golden {
    private static final Path DIR = Path.of("src", "test", "resources", "golden", "nft");

    private Golden() {}

    static void check(String name, String actual) {
        Path file = DIR.resolve(name + ".nft");
        try {
            if (Boolean.getBoolean("golden.update")) {
                Files.createDirectories(DIR);
                Files.writeString(file, actual, StandardCharsets.UTF_8);
                return;
            }
            assertThat(file).as("golden file %s (run with -Dgolden.update=true to create it)", file).exists();
            assertThat(actual).as("script differs from %s (run with -Dgolden.update=true and review the diff)", file)
                    .isEqualTo(Files.readString(file, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
