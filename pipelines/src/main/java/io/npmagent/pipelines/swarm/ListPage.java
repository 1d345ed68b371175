package io.npmagent.pipelines.swarm;

import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.Flow;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A list page's body, read as it arrives: its size, and from its head (a list's {@code metadata} comes
 * before its {@code items}) the resourceVersion to watch from and the continue token of the next page.
 * The items are counted, not kept: a thousand watchers relisting 100,000 pods would otherwise hold
 * gigabytes.
 */
final class ListPage {
    private static final int HEAD = 8192;
    private static final Pattern VERSION = Pattern.compile("\"resourceVersion\":\"(\\d+)\"");
    private static final Pattern CONTINUE = Pattern.compile("\"continue\":\"([^\"]*)\"");

    private final byte[] head = new byte[HEAD];
    private int headLength;
    volatile int status;
    long bytes;

    HttpResponse.BodySubscriber<Void> subscriber(int statusCode) {
        this.status = statusCode;
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
                    int n = Math.min(b.remaining(), HEAD - headLength);
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

    /** The text before the items: the list's own metadata. */
    private String metadata() {
        String text = new String(head, 0, headLength, java.nio.charset.StandardCharsets.US_ASCII);
        int items = text.indexOf("\"items\"");
        return items < 0 ? text : text.substring(0, items);
    }

    long resourceVersion() {
        Matcher m = VERSION.matcher(metadata());
        if (!m.find()) {
            throw new IllegalStateException("a list page without a resourceVersion: " + metadata());
        }
        return Long.parseLong(m.group(1));
    }

    String continueToken() {
        Matcher m = CONTINUE.matcher(metadata());
        return m.find() ? m.group(1) : "";
    }
}
