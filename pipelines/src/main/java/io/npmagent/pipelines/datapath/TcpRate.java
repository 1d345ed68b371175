package io.npmagent.pipelines.datapath;

import io.npmagent.iptables.exec.CommandResult;
import io.npmagent.iptables.exec.ProcessRunner;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/**
 * {@code tcprate} ({@code pipelines/src/main/c/tcprate.c}, on the class path beside this class): built
 * with {@code cc -O2} on first use into {@code pipelines/target/native}, again whenever the source
 * differs from the one last built; and the command lines of its two modes.
 */
final class TcpRate {
    /** Connects kept in flight by the client: enough to keep both cores busy, few enough not to queue at the server. */
    static final int CONCURRENCY = 16;
    private static final String SOURCE = "tcprate.c";

    private final Path binary;

    private TcpRate(Path binary) {
        this.binary = binary;
    }

    /** Thrown when tcprate cannot be built; the message says what to install or what the compiler said. */
    static final class BuildFailed extends Exception {
        private static final long serialVersionUID = 1L;

        BuildFailed(String message) {
            super(message);
        }
    }

    static TcpRate build() throws IOException, BuildFailed {
        byte[] source;
        try (InputStream in = TcpRate.class.getResourceAsStream(SOURCE)) {
            if (in == null) {
                throw new BuildFailed(SOURCE + " is missing from the class path (pipelines/src/main/c, copied by the pipelines build)");
            }
            source = in.readAllBytes();
        }
        Path dir = targetDir().resolve("native");
        Path binary = dir.resolve("tcprate");
        Path built = dir.resolve(SOURCE);
        if (Files.isExecutable(binary) && Files.exists(built) && Arrays.equals(Files.readAllBytes(built), source)) {
            return new TcpRate(binary);
        }
        if (!ProcessRunner.host().available("cc")) {
            throw new BuildFailed("cc is not installed: the datapath pipeline compiles pipelines/src/main/c/" + SOURCE
                    + " at run time (install a C compiler: pipelines/install-deps gcc, or clang)");
        }
        Files.createDirectories(dir);
        // Built under names of our own and moved into place, so two runs building at once never see half a file.
        Path tmpSource = Files.createTempFile(dir, "tcprate-", ".c");
        Path tmpBinary = dir.resolve(tmpSource.getFileName().toString().replace(".c", ""));
        try {
            Files.write(tmpSource, source);
            CommandResult cc = ProcessRunner.host().run(List.of("cc", "-O2", "-Wall", "-o", tmpBinary.toString(), tmpSource.toString()),
                    "", Duration.ofSeconds(60));
            if (!cc.ok()) {
                throw new BuildFailed("cc could not build " + SOURCE + ": " + cc.errorSummary());
            }
            Files.move(tmpBinary, binary, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            Files.move(tmpSource, built, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmpSource);
            Files.deleteIfExists(tmpBinary);
        }
        return new TcpRate(binary);
    }

    /**
     * {@code pipelines/target}: the parent of where this class was loaded from ({@code target/pipelines.jar}
     * for the pipeline scripts, {@code target/classes} under Maven).
     */
    private static Path targetDir() throws IOException {
        try {
            return Path.of(TcpRate.class.getProtectionDomain().getCodeSource().getLocation().toURI()).getParent();
        } catch (URISyntaxException | RuntimeException e) {
            throw new IOException("cannot tell where the pipelines classes are: " + e.getMessage(), e);
        }
    }

    Path binary() {
        return binary;
    }

    /** The server: accepts and closes on {@code port}; prints {@code ready} once it listens. */
    List<String> server(int port) {
        return List.of(binary.toString(), "server", Integer.toString(port));
    }

    /** The client: connections per second over {@code seconds}, after {@code warmup} seconds not counted. */
    List<String> client(String address, int port, double seconds, int concurrency, double warmup, Duration connectTimeout) {
        return List.of(binary.toString(), "client", address, Integer.toString(port), Double.toString(seconds),
                Integer.toString(concurrency), Double.toString(warmup), Long.toString(connectTimeout.toMillis()));
    }

    /** The client's one figure, connections per second; throws with what it said when it printed none. */
    static double parse(CommandResult r) throws IOException {
        if (!r.ok()) {
            throw new IOException("tcprate client failed: " + r.errorSummary());
        }
        try {
            return Double.parseDouble(r.stdout().strip());
        } catch (NumberFormatException e) {
            throw new IOException("tcprate client printed no figure: " + r.stdout().strip() + " " + r.stderr().strip());
        }
    }
}
