package io.npmagent.pipelines.swarm;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.Runtime;
import io.kubernetes.client.proto.V1;
import java.io.ByteArrayOutputStream;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Flow;
import org.junit.jupiter.api.Test;

/** A list page's resourceVersion and continue token, from its head, in JSON and in protobuf, compressed or not, however the body is split. */
class ListPageTest {

    @Test
    void jsonHead() {
        String body = "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"4711\",\"continue\":\"eyJ2Ijo\"},"
                + "\"items\":[{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"12\"}}]}";
        ListPage page = read("application/json", body.getBytes(StandardCharsets.UTF_8), 7);
        assertThat(page.resourceVersion()).isEqualTo(4711);
        assertThat(page.continueToken()).isEqualTo("eyJ2Ijo");
        assertThat(page.bytes).isEqualTo(body.length());
    }

    @Test
    void protobufHeadOfAListLargerThanTheHead() throws Exception {
        V1.PodList.Builder list = V1.PodList.newBuilder().setMetadata(Meta.ListMeta.newBuilder().setResourceVersion("90210").setContinue("tok/en+=="));
        for (int i = 0; i < 500; i++) {
            list.addItems(V1.Pod.newBuilder().setMetadata(Meta.ObjectMeta.newBuilder().setName("pod-" + i).setNamespace("ns").setResourceVersion("77")));
        }
        Runtime.Unknown unknown = Runtime.Unknown.newBuilder().setTypeMeta(Runtime.TypeMeta.newBuilder().setApiVersion("v1").setKind("PodList"))
                .setRaw(ByteString.copyFrom(list.build().toByteArray())).setContentEncoding("").setContentType("").build();
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.write(new byte[] {'k', '8', 's', 0});
        unknown.writeTo(body);
        assertThat(body.size()).isGreaterThan(8192);

        ListPage page = read("application/vnd.kubernetes.protobuf", body.toByteArray(), 1000);
        assertThat(page.resourceVersion()).isEqualTo(90210);
        assertThat(page.continueToken()).isEqualTo("tok/en+==");

        ByteArrayOutputStream gzipped = new ByteArrayOutputStream();
        try (java.util.zip.GZIPOutputStream gz = new java.util.zip.GZIPOutputStream(gzipped)) {
            gz.write(body.toByteArray());
        }
        ListPage compressed = read("application/vnd.kubernetes.protobuf", "gzip", gzipped.toByteArray(), 512);
        assertThat(compressed.resourceVersion()).as("the head inflated from the start of a compressed body").isEqualTo(90210);
        assertThat(compressed.continueToken()).isEqualTo("tok/en+==");
        assertThat(compressed.bytes).as("bytes on the wire").isEqualTo(gzipped.size()).isLessThan(body.size());

        ListPage last = read("application/vnd.kubernetes.protobuf", wrap(V1.PodList.newBuilder()
                .setMetadata(Meta.ListMeta.newBuilder().setResourceVersion("5")).build()), 3);
        assertThat(last.continueToken()).isEmpty();
        assertThat(last.resourceVersion()).isEqualTo(5);
    }

    private static byte[] wrap(V1.PodList list) throws Exception {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.write(new byte[] {'k', '8', 's', 0});
        Runtime.Unknown.newBuilder().setTypeMeta(Runtime.TypeMeta.newBuilder().setApiVersion("v1").setKind("PodList"))
                .setRaw(ByteString.copyFrom(list.toByteArray())).build().writeTo(body);
        return body.toByteArray();
    }

    /** The body through the page's subscriber in chunks of {@code chunk} bytes, as HTTP/2 frames would bring it. */
    private static ListPage read(String contentType, byte[] body, int chunk) {
        return read(contentType, null, body, chunk);
    }

    private static ListPage read(String contentType, String contentEncoding, byte[] body, int chunk) {
        ListPage page = new ListPage();
        HttpResponse.ResponseInfo info = new HttpResponse.ResponseInfo() {
            @Override
            public int statusCode() {
                return 200;
            }

            @Override
            public HttpHeaders headers() {
                return HttpHeaders.of(contentEncoding == null ? Map.of("content-type", List.of(contentType))
                        : Map.of("content-type", List.of(contentType), "content-encoding", List.of(contentEncoding)), (a, b) -> true);
            }

            @Override
            public HttpClient.Version version() {
                return HttpClient.Version.HTTP_2;
            }
        };
        HttpResponse.BodySubscriber<Void> s = page.subscriber(info);
        s.onSubscribe(new Flow.Subscription() {
            @Override
            public void request(long n) {}

            @Override
            public void cancel() {}
        });
        for (int at = 0; at < body.length; at += chunk) {
            s.onNext(List.of(ByteBuffer.wrap(body, at, Math.min(chunk, body.length - at))));
        }
        s.onComplete();
        return page;
    }
}
