package io.npmagent.pipelines.swarm;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.WireFormat;
import io.kubernetes.client.proto.Meta;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Flow;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPInputStream;

/**
 * A list page's body, read as it arrives: its size, and from its head (a list's {@code metadata} comes
 * before its {@code items}, in JSON and in protobuf) the resourceVersion to watch from and the continue
 * token of the next page. The items are counted, not kept: a thousand watchers relisting 100,000 pods
 * would otherwise hold gigabytes.
 */
final class ListPage {
    private static final int HEAD = 8192;
    private static final Pattern VERSION = Pattern.compile("\"resourceVersion\":\"(\\d+)\"");
    private static final Pattern CONTINUE = Pattern.compile("\"continue\":\"([^\"]*)\"");

    /** Of a gzipped body, this much of its start is kept: more than enough to inflate {@link #HEAD} bytes. */
    private static final int GZIPPED_HEAD = 64 * 1024;

    private byte[] head = new byte[HEAD];
    private int headLength;
    volatile int status;
    /** A refusal's Retry-After in seconds, as the agent reads it (1 without one, at most 10). */
    volatile long retryAfterSeconds = 1;
    private boolean protobuf;
    private boolean gzipped;
    /** Bytes on the wire (compressed, when the server compressed). */
    long bytes;

    /** A refusal's Retry-After in seconds, as the agent reads it: 1 without one, at most 10. */
    static long retryAfterSeconds(java.net.http.HttpHeaders headers) {
        try {
            return headers.firstValue("retry-after").map(v -> Math.max(0, Math.min(10, Long.parseLong(v.trim())))).orElse(1L);
        } catch (NumberFormatException dateOrJunk) {
            return 1;
        }
    }

    HttpResponse.BodySubscriber<Void> subscriber(HttpResponse.ResponseInfo info) {
        this.status = info.statusCode();
        retryAfterSeconds = retryAfterSeconds(info.headers());
        this.protobuf = info.headers().firstValue("content-type").orElse("").startsWith(ApiAccess.PROTOBUF);
        this.gzipped = info.headers().firstValue("content-encoding").orElse("").equals("gzip");
        if (gzipped) {
            head = new byte[GZIPPED_HEAD];
        }
        return HttpResponse.BodySubscribers.fromSubscriber(new Flow.Subscriber<List<ByteBuffer>>() {
            private Flow.Subscription s;

            @Override
            public void onSubscribe(Flow.Subscription subscription) {
                s = subscription;
                s.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(List<ByteBuffer> buffers) {
                for (ByteBuffer b : buffers) {
                    bytes += b.remaining();
                    int n = Math.min(b.remaining(), head.length - headLength);
                    b.get(head, headLength, n);
                    headLength += n;
                }
            }

            @Override
            public void onError(Throwable t) {
                // the exchange's future fails too
            }

            @Override
            public void onComplete() {
                // the exchange's future completes
            }
        });
    }

    /** The body's first bytes, inflated if the server compressed it: as many as the start kept gives, up to {@link #HEAD}. */
    private byte[] start() {
        if (!gzipped) {
            return Arrays.copyOf(head, headLength);
        }
        byte[] out = new byte[HEAD];
        int n = 0;
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(head, 0, headLength))) {
            int r;
            while (n < HEAD && (r = in.read(out, n, HEAD - n)) > 0) {
                n += r;
            }
        } catch (IOException e) {
            // the kept start ends mid-stream: what was inflated before it is the head
        }
        return Arrays.copyOf(out, n);
    }

    /** The text before the items: the list's own metadata. */
    private String metadata() {
        byte[] start = start();
        String text = new String(start, StandardCharsets.US_ASCII);
        int items = text.indexOf("\"items\"");
        return items < 0 ? text : text.substring(0, items);
    }

    long resourceVersion() {
        if (protobuf) {
            return Long.parseLong(protobufMetadata().getResourceVersion());
        }
        Matcher m = VERSION.matcher(metadata());
        if (!m.find()) {
            throw new IllegalStateException("a list page without a resourceVersion: " + metadata());
        }
        return Long.parseLong(m.group(1));
    }

    String continueToken() {
        if (protobuf) {
            return protobufMetadata().getContinue();
        }
        Matcher m = CONTINUE.matcher(metadata());
        return m.find() ? m.group(1) : "";
    }

    /**
     * A protobuf list's own metadata: after the 4-byte magic, a {@code runtime.Unknown} whose field 2 (raw)
     * is the list, whose field 1 is its {@code ListMeta}.
     */
    private Meta.ListMeta protobufMetadata() {
        try {
            byte[] start = start();
            CodedInputStream in = CodedInputStream.newInstance(start, 4, start.length - 4);
            descend(in, 2);
            int length = descend(in, 1);
            return Meta.ListMeta.parseFrom(in.readRawBytes(length));
        } catch (IOException e) {
            throw new IllegalStateException("a protobuf list page whose metadata is not in its first " + HEAD + " bytes", e);
        }
    }

    /** Skips fields up to length-delimited field {@code number}; returns its length, the stream at its first byte. */
    private static int descend(CodedInputStream in, int number) throws IOException {
        while (true) {
            int tag = in.readTag();
            if (tag == 0) {
                throw new IOException("no field " + number);
            }
            if (WireFormat.getTagFieldNumber(tag) == number && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
                return in.readRawVarint32();
            }
            in.skipField(tag);
        }
    }
}
