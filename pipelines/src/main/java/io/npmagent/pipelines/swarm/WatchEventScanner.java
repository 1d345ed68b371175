package io.npmagent.pipelines.swarm;

import java.nio.ByteBuffer;

/**
 * Reads a JSON watch stream as the bytes arrive, without decoding it: one event per line, and of each
 * event the first {@code "name":"} and the first {@code "resourceVersion":"} (the object's own: an
 * event is {@code {"type":..,"object":{"kind":..,"apiVersion":..,"metadata":{"name":..,"namespace":..,
 * "uid":..,"resourceVersion":..}}}}, and Go writes ObjectMeta's fields in that order, labels and
 * annotations after them), and whether it is an {@code ERROR} (the server's 410 Gone). A thousand
 * watchers read tens of thousands of events a second on one core: decoding each into objects would make
 * the swarm, not the API server, the thing measured.
 */
final class WatchEventScanner {
    /** What a complete event line held. */
    interface Sink {
        void event(String name, long resourceVersion, boolean error, int bytes);
    }

    private static final byte[] NAME = "\"name\":\"".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final byte[] VERSION = "\"resourceVersion\":\"".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final byte[] ERROR = "{\"type\":\"ERROR\"".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private final Sink sink;
    private int bytes;
    private int nameMatched;
    private int versionMatched;
    private int errorMatched;
    private boolean errorKnown;
    private boolean error;
    private StringBuilder name;
    private boolean nameDone;
    private long version = -1;
    private boolean inVersion;
    private boolean versionDone;

    WatchEventScanner(Sink sink) {
        this.sink = sink;
    }

    void feed(ByteBuffer buffer) {
        while (buffer.hasRemaining()) {
            byte b = buffer.get();
            if (b == '\n') {
                if (bytes > 0) {
                    sink.event(name == null ? "" : name.toString(), version, error, bytes + 1);
                }
                reset();
                continue;
            }
            bytes++;
            if (!errorKnown) {
                if (b == ERROR[errorMatched]) {
                    if (++errorMatched == ERROR.length) {
                        errorKnown = true;
                        error = true;
                    }
                } else {
                    errorKnown = true;
                }
            }
            if (!nameDone) {
                if (name != null) {
                    if (b == '"') {
                        nameDone = true;
                    } else {
                        name.append((char) b);
                    }
                } else {
                    nameMatched = advance(NAME, nameMatched, b);
                    if (nameMatched == NAME.length) {
                        name = new StringBuilder(24);
                    }
                }
            }
            if (!versionDone) {
                if (inVersion) {
                    if (b >= '0' && b <= '9') {
                        version = (version < 0 ? 0 : version * 10) + (b - '0');
                    } else {
                        versionDone = true;
                    }
                } else {
                    versionMatched = advance(VERSION, versionMatched, b);
                    if (versionMatched == VERSION.length) {
                        inVersion = true;
                    }
                }
            }
        }
    }

    /**
     * One byte further along {@code pattern}. Both patterns begin with a quote and hold no other prefix of
     * themselves, so after a mismatch the only partial match left is a quote.
     */
    private static int advance(byte[] pattern, int matched, byte b) {
        if (b == pattern[matched]) {
            return matched + 1;
        }
        return b == pattern[0] ? 1 : 0;
    }

    private void reset() {
        bytes = 0;
        nameMatched = 0;
        versionMatched = 0;
        errorMatched = 0;
        errorKnown = false;
        error = false;
        name = null;
        nameDone = false;
        version = -1;
        inVersion = false;
        versionDone = false;
    }
}
