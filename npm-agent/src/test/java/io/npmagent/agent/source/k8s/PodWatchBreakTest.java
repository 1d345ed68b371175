package io.npmagent.agent.source.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.sun.net.httpserver.HttpServer;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.Runtime;
import io.kubernetes.client.proto.V1;
import io.kubernetes.client.util.Watch;
import io.kubernetes.client.util.Watchable;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Where a protobuf pod watch breaks: the server's ERROR is its Status, a stream that ends inside a frame ends the watch after the events
 * read whole (the reflector watches again from the last version), and a frame that arrived whole but
 * is no event fails the way client-java's reflector answers with a relist. Streams cut on cue are
 * faults a real server gives only to a broken connection, so this one is the JDK's HTTP server.
 */
class PodWatchBreakTest {
    private static byte[] frame(byte[] event) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new DataOutputStream(out).writeInt(event.length);
        out.write(event);
        return out.toByteArray();
    }

    private static byte[] added(String name, String version) throws IOException {
        return event("ADDED", V1.Pod.newBuilder().setMetadata(Meta.ObjectMeta.newBuilder().setName(name).setNamespace("shop").setResourceVersion(version)).build());
    }

    private static byte[] event(String type, com.google.protobuf.MessageLite object) throws IOException {
        ByteString wrapped = ByteString.copyFrom(new byte[] {'k', '8', 's', 0})
                .concat(Runtime.Unknown.newBuilder().setRaw(object.toByteString()).build().toByteString());
        return frame(Meta.WatchEvent.newBuilder().setType(type).setObject(Runtime.RawExtension.newBuilder().setRaw(wrapped)).build().toByteArray());
    }

    private static Watchable<V1Pod> watchServing(byte[] body, AtomicReference<HttpServer> server) throws Exception {
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        s.createContext("/api/v1/pods", exchange -> {
            exchange.getResponseHeaders().set("Content-Type", "application/vnd.kubernetes.protobuf;stream=watch");
            exchange.sendResponseHeaders(200, 0);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        s.start();
        server.set(s);
        ApiClient client = new ApiClient().setBasePath("http://127.0.0.1:" + s.getAddress().getPort());
        return new PodWatchList(client, p -> p).watch("7", 30);
    }

    @Test
    void aStreamCutInsideAFrameEndsTheWatchAfterTheWholeEvents() throws Exception {
        byte[] second = added("b", "9");
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.write(added("a", "8"));
        body.write(Arrays.copyOf(second, second.length - 3));
        AtomicReference<HttpServer> server = new AtomicReference<>();
        try (Watchable<V1Pod> w = watchServing(body.toByteArray(), server)) {
            assertThat(w.hasNext()).isTrue();
            Watch.Response<V1Pod> a = w.next();
            assertThat(a.type).isEqualTo("ADDED");
            assertThat(a.object.getMetadata().getResourceVersion()).isEqualTo("8");
            assertThat(w.hasNext()).as("the cut frame is not an event; the watch ends, to be resumed from 8").isFalse();
        } finally {
            server.get().stop(0);
        }
    }

    @Test
    void anErrorEventIsTheServersStatusAsTheReflectorReadsIt() throws Exception {
        byte[] body = event("ERROR", Meta.Status.newBuilder().setStatus("Failure").setCode(410).setReason("Expired")
                .setMessage("too old resource version: 7 (12)").build());
        AtomicReference<HttpServer> server = new AtomicReference<>();
        try (Watchable<V1Pod> w = watchServing(body, server)) {
            Watch.Response<V1Pod> gone = w.next();
            assertThat(gone.type).isEqualTo("ERROR");
            assertThat(gone.status.getCode()).as("410 makes the reflector relist").isEqualTo(410);
            assertThat(gone.status.getReason()).isEqualTo("Expired");
            assertThat(gone.status.getMessage()).contains("too old resource version");
        } finally {
            server.get().stop(0);
        }
    }

    @Test
    void aWholeFrameThatIsNoEventFailsTheWatchForARelist() throws Exception {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.write(added("a", "8"));
        body.write(frame(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff}));
        AtomicReference<HttpServer> server = new AtomicReference<>();
        try (Watchable<V1Pod> w = watchServing(body.toByteArray(), server)) {
            assertThat(w.next().object.getMetadata().getName()).isEqualTo("a");
            // client-java's reflector relists on this message, as where its own JSON watch breaks.
            assertThatThrownBy(w::hasNext).hasMessageStartingWith("IO Exception during hasNext");
        } finally {
            server.get().stop(0);
        }
    }
}
