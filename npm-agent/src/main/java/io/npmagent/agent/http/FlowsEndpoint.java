package io.npmagent.agent.http;

import com.sun.net.httpserver.HttpExchange;
import io.npmagent.agent.flows.AgentFlows;
import io.npmagent.agent.flows.FlowJson;
import io.npmagent.agent.flows.FlowQuery;
import io.npmagent.dataplane.flow.FlowRecord;
import io.npmagent.dataplane.model.ApiSyntax;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code GET /debug/flows}: the node's flow verdicts ({@link FlowQuery} says what a reader may ask), as text
 * (one {@link FlowRecord#line()} a line, control characters escaped) or JSON lines ({@link FlowJson}), latest
 * first. With {@code follow} the answer is chunked: the flows held now, oldest first, then each flow again
 * as a report changes it, until the client goes or the agent stops; an empty line every
 * {@link #KEEPALIVE} keeps idle proxies from cutting the stream and tells a gone client apart (readers skip
 * empty lines). A follower that reads slower than flows come loses updates rather than holding the
 * reporting thread: text output says how many.
 */
final class FlowsEndpoint {
    static final Duration KEEPALIVE = Duration.ofSeconds(5);
    /** Followers at once: each holds a thread of the debug listener. */
    static final int MAX_FOLLOWERS = 8;
    private static final int FOLLOW_QUEUE = 4096;

    private final AgentFlows flows;
    private final Semaphore followers = new Semaphore(MAX_FOLLOWERS);

    FlowsEndpoint(AgentFlows flows) {
        this.flows = flows;
    }

    void handle(HttpExchange ex) throws IOException {
        FlowQuery query;
        try {
            query = FlowQuery.parse(ex.getRequestURI().getRawQuery(), Instant.now());
        } catch (FlowQuery.Bad e) {
            AgentHttp.reply(ex, 400, "text/plain; charset=utf-8", "bad parameter " + ApiSyntax.escapeControls(e.getMessage()) + "\n");
            return;
        }
        String type = query.json() ? "application/x-ndjson; charset=utf-8" : "text/plain; charset=utf-8";
        if (!query.follow()) {
            StringBuilder body = new StringBuilder();
            for (FlowRecord f : flows.flows(query.filter())) {
                body.append(render(f, query.json())).append('\n');
            }
            AgentHttp.reply(ex, 200, type, body.toString());
            return;
        }
        if (!followers.tryAcquire()) {
            AgentHttp.reply(ex, 503, "text/plain; charset=utf-8", "too many followers (" + MAX_FOLLOWERS + "); try again later\n");
            return;
        }
        try {
            follow(ex, query, type);
        } finally {
            followers.release();
        }
    }

    private void follow(HttpExchange ex, FlowQuery query, String type) throws IOException {
        BlockingQueue<FlowRecord> updates = new ArrayBlockingQueue<>(FOLLOW_QUEUE);
        AtomicLong lost = new AtomicLong();
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(200, 0); // chunked
        OutputStream out = ex.getResponseBody();
        // Follow first, then list: a flow changed in between comes twice, never not at all.
        try (AutoCloseable subscription = flows.follow(query.filter(), f -> {
            if (!updates.offer(f)) {
                lost.incrementAndGet();
            }
        })) {
            List<FlowRecord> now = flows.flows(query.filter()).stream().sorted(Comparator.comparing(FlowRecord::last)).toList();
            for (FlowRecord f : now) {
                out.write((render(f, query.json()) + "\n").getBytes(StandardCharsets.UTF_8));
            }
            out.flush();
            while (!Thread.currentThread().isInterrupted()) {
                FlowRecord f = updates.poll(KEEPALIVE.toMillis(), TimeUnit.MILLISECONDS);
                StringBuilder chunk = new StringBuilder();
                long skipped = lost.getAndSet(0);
                if (skipped > 0 && !query.json()) {
                    chunk.append("# ").append(skipped).append(" updates skipped: this reader is slower than the flows\n");
                }
                if (f == null) {
                    chunk.append('\n');
                } else {
                    chunk.append(render(f, query.json())).append('\n');
                    FlowRecord more;
                    while ((more = updates.poll()) != null) {
                        chunk.append(render(more, query.json())).append('\n');
                    }
                }
                out.write(chunk.toString().getBytes(StandardCharsets.UTF_8));
                out.flush();
            }
        } catch (IOException e) {
            // the client went: the normal end of a follow
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the agent stops serving
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static String render(FlowRecord f, boolean json) {
        return json ? FlowJson.line(f) : ApiSyntax.escapeControls(f.line());
    }
}
