package io.npmagent.bpf.libbpf;

import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.ProcessRunner;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Compiles C test resources of this package with clang, which the module's build already requires
 * (src/main/c/build): so these tests need nothing the build does not, and never skip.
 */
final class Clang {
    private Clang() {}

    /** Copies the resource {@code name} of this package into {@code dir}. */
    static Path resource(String name, Path dir) {
        try (InputStream in = Clang.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalArgumentException("no test resource " + name);
            }
            Path out = dir.resolve(name);
            Files.write(out, in.readAllBytes());
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A BPF object from a C source, with the flags src/main/c/build uses. */
    static byte[] bpfObject(Path source) {
        Path out = source.resolveSibling(source.getFileName() + ".o");
        run(List.of("clang", "-O2", "-g", "-Wall", "-target", "bpf", "-I/usr/include/" + multiarch(), "-c",
                source.toString(), "-o", out.toString()));
        try {
            return Files.readAllBytes(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A host executable from a C source. */
    static Path executable(Path source) {
        Path out = source.resolveSibling(source.getFileName() + ".bin");
        run(List.of("clang", "-Wall", "-o", out.toString(), source.toString()));
        return out;
    }

    static CommandResult run(List<String> argv) {
        CommandResult r = ProcessRunner.host().run(new ArrayList<>(argv), "", Duration.ofSeconds(60));
        if (!r.ok()) {
            throw new AssertionError(String.join(" ", argv) + ": " + r.errorSummary());
        }
        return r;
    }

    /** Where the kernel's asm headers live (asm/types.h), as the build finds them. */
    private static String multiarch() {
        String arch = System.getProperty("os.arch");
        return (arch.equals("amd64") ? "x86_64" : arch) + "-linux-gnu";
    }
}
