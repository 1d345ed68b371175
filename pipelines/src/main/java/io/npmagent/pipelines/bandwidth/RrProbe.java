package io.npmagent.pipelines.bandwidth;

import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.pipelines.bench.NativeTool;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/** {@code rrprobe} ({@code pipelines/src/main/c/rrprobe.c}, built by {@link NativeTool}): its command lines and its one line of figures. */
final class RrProbe {
    /** Request and response size: with headers, a frame well under the shaper's "small" 256 bytes. */
    static final int MESSAGE_BYTES = 32;

    private final Path binary;

    private RrProbe(Path binary) {
        this.binary = binary;
    }

    static RrProbe build() throws IOException, NativeTool.BuildFailed {
        return new RrProbe(NativeTool.build("rrprobe"));
    }

    /** Echoes messages on {@code port}; prints {@code ready} once it listens. */
    List<String> server(int port) {
        return List.of(binary.toString(), "server", Integer.toString(port));
    }

    List<String> client(String address, int port, double seconds, double warmup) {
        return client(address, port, seconds, warmup, MESSAGE_BYTES, MESSAGE_BYTES, 0);
    }

    /**
     * A flow of {@code request}-byte requests, each answered with {@code response} bytes: back to back
     * ({@code intervalMicros} 0), or one every {@code intervalMicros}.
     */
    List<String> client(String address, int port, double seconds, double warmup, int request, int response, long intervalMicros) {
        return List.of(binary.toString(), "client", address, Integer.toString(port), Double.toString(seconds),
                Integer.toString(request), Double.toString(warmup), Integer.toString(response), Long.toString(intervalMicros));
    }

    /**
     * Request/response latencies over the measured window, in microseconds; the connection's TCP
     * retransmissions over the whole run; the request bytes of the measured exchanges.
     */
    record Latency(long count, double p50, double p90, double p99, double p999, double max, long retransmits, long bytes) {}

    static Latency parse(CommandResult r) throws IOException {
        if (!r.ok()) {
            throw new IOException("rrprobe client failed: " + r.errorSummary());
        }
        String[] f = r.stdout().strip().split("\\s+");
        try {
            return new Latency(Long.parseLong(f[0]), Double.parseDouble(f[1]), Double.parseDouble(f[2]), Double.parseDouble(f[3]),
                    Double.parseDouble(f[4]), Double.parseDouble(f[5]), Long.parseLong(f[6]), Long.parseLong(f[7]));
        } catch (RuntimeException e) {
            throw new IOException("rrprobe client printed no figures: " + r.stdout().strip() + " " + r.stderr().strip());
        }
    }
}
