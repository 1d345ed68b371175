package io.npmagent.pipelines.swarm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The watch stream read as bytes: events, each one's object name and resourceVersion, and the server's ERROR. */
class WatchEventScannerTest {
    record Seen(String name, long rv, boolean error, int bytes) {}

    private static final String STREAM = """
            {"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"swarm-7","generateName":"app-1-","namespace":"ns-3","uid":"u1","resourceVersion":"1042","labels":{"name":"x"},"annotations":{"a":"\\"resourceVersion\\":\\"9\\""}}}}
            {"type":"MODIFIED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"app-2-1000a","namespace":"ns-0","resourceVersion":"1043"},"spec":{"containers":[{"name":"main"}]}}}
            {"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 5 (1042)","reason":"Expired","code":410}}
            """;

    private static List<Seen> scan(byte[] bytes, int chunk) {
        List<Seen> seen = new ArrayList<>();
        WatchEventScanner scanner = new WatchEventScanner((name, rv, error, size) -> seen.add(new Seen(name, rv, error, size)));
        for (int at = 0; at < bytes.length; at += chunk) {
            scanner.feed(ByteBuffer.wrap(bytes, at, Math.min(chunk, bytes.length - at)));
        }
        return seen;
    }

    @Test
    void eachLineIsAnEventWithItsObjectsNameAndVersion() {
        byte[] bytes = STREAM.getBytes(StandardCharsets.UTF_8);
        String[] lines = STREAM.split("\n");
        assertThat(scan(bytes, bytes.length)).containsExactly(
                new Seen("swarm-7", 1042, false, lines[0].length() + 1),
                new Seen("app-2-1000a", 1043, false, lines[1].length() + 1),
                new Seen("", -1, true, lines[2].length() + 1));
    }

    @Test
    void howTheBytesAreCutDoesNotMatter() {
        byte[] bytes = STREAM.getBytes(StandardCharsets.UTF_8);
        for (int chunk = 1; chunk <= 64; chunk++) {
            assertThat(scan(bytes, chunk)).as("in chunks of %d bytes", chunk).isEqualTo(scan(bytes, bytes.length));
        }
    }

    @Test
    void aQuoteThatBreaksAMatchMayBeginTheNextOne() {
        byte[] bytes = "{\"x\":\"\"\"resourceVersion\":\"77\",\"\"name\":\"n\"}\n".getBytes(StandardCharsets.UTF_8);
        assertThat(scan(bytes, 3)).extracting(Seen::rv, Seen::name).containsExactly(org.assertj.core.groups.Tuple.tuple(77L, "n"));
    }
}
