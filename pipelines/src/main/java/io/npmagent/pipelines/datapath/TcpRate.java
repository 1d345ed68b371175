package io.npmagent.pipelines.datapath;

import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.pipelines.bench.NativeTool;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * {@code tcprate} ({@code pipelines/src/main/c/tcprate.c}, built by {@link NativeTool}): the command lines
 * of its two modes.
 */
final class TcpRate {
    /** Connects kept in flight by the client: enough to keep both cores busy, few enough not to queue at the server. */
    static final int CONCURRENCY = 16;
    private final Path binary;

    private TcpRate(Path binary) {
        this.binary = binary;
    }

    static TcpRate build() throws IOException, NativeTool.BuildFailed {
        return new TcpRate(NativeTool.build("tcprate"));
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
