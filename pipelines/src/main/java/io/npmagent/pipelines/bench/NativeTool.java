package io.npmagent.pipelines.bench;

import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.ProcessRunner;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A benchmark tool written in C ({@code pipelines/src/main/c/NAME.c}, on the class path beside this
 * class): built with {@code cc -O2} on first use into {@code pipelines/target/native},
 * again whenever the source differs from the one last built. C, because an interpreter would be the
 * bottleneck of what these tools measure.
 */
public final class NativeTool {
    private NativeTool() {}

    /** Thrown when a tool cannot be built; the message says what to install or what the compiler said. */
    public static final class BuildFailed extends Exception {
        private static final long serialVersionUID = 1L;

        BuildFailed(String message) {
            super(message);
        }
    }

    /** The binary of {@code name}.c, built if stale. */
    public static Path build(String name) throws IOException, BuildFailed {
        return build(name, targetDir().resolve("native"), List.of());
    }

    /**
     * The binary of {@code name}.c linked statically (into {@code target/native/static}), built if stale: for a
     * tool run as a pod's container, whose image has no C library.
     */
    public static Path buildStatic(String name) throws IOException, BuildFailed {
        return build(name, targetDir().resolve("native").resolve("static"), List.of("-static"));
    }

    private static Path build(String name, Path dir, List<String> flags) throws IOException, BuildFailed {
        String sourceName = name + ".c";
        byte[] source;
        try (InputStream in = NativeTool.class.getResourceAsStream(sourceName)) {
            if (in == null) {
                throw new BuildFailed(sourceName + " is missing from the class path (pipelines/src/main/c, copied by the pipelines build)");
            }
            source = in.readAllBytes();
        }
        Path binary = dir.resolve(name);
        Path built = dir.resolve(sourceName);
        if (Files.isExecutable(binary) && Files.exists(built) && Arrays.equals(Files.readAllBytes(built), source)) {
            return binary;
        }
        if (!ProcessRunner.host().available("cc")) {
            throw new BuildFailed("cc is not installed: the pipelines compile pipelines/src/main/c/" + sourceName
                    + " at run time (install a C compiler: pipelines/install-deps gcc, or clang)");
        }
        Files.createDirectories(dir);
        // Built under names of our own and moved into place, so two runs building at once never see half a file.
        Path tmpSource = Files.createTempFile(dir, name + "-", ".c");
        Path tmpBinary = dir.resolve(tmpSource.getFileName().toString().replace(".c", ""));
        try {
            Files.write(tmpSource, source);
            List<String> argv = new ArrayList<>(List.of("cc", "-O2", "-Wall"));
            argv.addAll(flags);
            argv.addAll(List.of("-o", tmpBinary.toString(), tmpSource.toString()));
            CommandResult cc = ProcessRunner.host().run(argv, "", Duration.ofSeconds(60));
            if (!cc.ok()) {
                throw new BuildFailed("cc could not build " + sourceName + ": " + cc.errorSummary());
            }
            Files.move(tmpBinary, binary, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            Files.move(tmpSource, built, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmpSource);
            Files.deleteIfExists(tmpBinary);
        }
        return binary;
    }

    /**
     * {@code pipelines/target}: the parent of where this class was loaded from ({@code target/pipelines.jar}
     * for the pipeline scripts, {@code target/classes} under Maven).
     */
    private static Path targetDir() throws IOException {
        try {
            return Path.of(NativeTool.class.getProtectionDomain().getCodeSource().getLocation().toURI()).getParent();
        } catch (URISyntaxException | RuntimeException e) {
            throw new IOException("cannot tell where the pipelines classes are: " + e.getMessage(), e);
        }
    }
}
