package io.npmagent.agent.relay;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.npmagent.agent.source.k8s.PodWatchList;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Serves the {@link PodFeed} at {@code /api/v1/pods} as kube-apiserver serves the agent's requests there:
 * {@code watch=true&sendInitialEvents=true} is a WatchList, {@code watch=true&resourceVersion=V} a watch
 * from V, both protobuf streams ending at their {@code timeoutSeconds}. Nothing else: the relay is no API
 * server, and an agent that asks for anything else gets 405 or 406 and says so.
 *
 * <p>One thread per open watch, which blocks on its writes; a watcher that reads too slowly is cut off by
 * the feed, not by this thread. Callers are checked first ({@link Callers}): 401 without a token the API
 * server vouches for.
 */
public final class RelayServer implements AutoCloseable {
    /** A watch asked without a timeout ends after this, as the API server's default request timeout would end it. */
    static final int DEFAULT_TIMEOUT_S = 1800;
    private static final long POLL_MS = 1000;

    private final HttpServer server;
    private final PodFeed feed;
    private final Callers callers;
    private final ExecutorService threads;

    /** @param server bound, not yet started: plain HTTP in tests, HTTPS with the relay's certificate in a cluster */
    public RelayServer(HttpServer server, PodFeed feed, Callers callers) {
        this.server = server;
        this.feed = feed;
        this.callers = callers;
        AtomicInteger n = new AtomicInteger();
        this.threads = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "relay-watch-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(threads);
        server.createContext("/api/v1/pods", this::serve);
        server.start();
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private void serve(HttpExchange exchange) throws IOException {
        try (exchange) {
            if (!"GET".equals(exchange.getRequestMethod())) {
                refuse(exchange, 405, "the relay serves GET only");
                return;
            }
            if (!callers.allowed(exchange.getRequestHeaders().getFirst("Authorization"))) {
                refuse(exchange, 401, "Unauthorized");
                return;
            }
            String accept = exchange.getRequestHeaders().getFirst("Accept");
            if (accept == null || !accept.startsWith("application/vnd.kubernetes.protobuf")) {
                refuse(exchange, 406, "the relay serves pods in protobuf only");
                return;
            }
            if (!feed.listed()) {
                // An empty feed would tell agents there are no pods. The agent asks again after Retry-After.
                exchange.getResponseHeaders().set("Retry-After", "1");
                refuse(exchange, 429, "the relay has not read the API server's pods yet");
                return;
            }
            Map<String, String> query = query(exchange.getRequestURI().getRawQuery());
            if (!"true".equals(query.get("watch"))) {
                refuse(exchange, 405, "the relay serves a WatchList and a watch of pods, not a list");
                return;
            }
            PodFeed.Subscription stream;
            if ("true".equals(query.get("sendInitialEvents"))) {
                stream = feed.watchList();
            } else {
                long from;
                try {
                    from = Long.parseLong(query.getOrDefault("resourceVersion", ""));
                } catch (NumberFormatException e) {
                    refuse(exchange, 400, "a watch of the relay names the resourceVersion it resumes from");
                    return;
                }
                stream = feed.watch(from);
            }
            long timeout = parseTimeout(query.get("timeoutSeconds"));
            try (stream) {
                write(exchange, stream, System.nanoTime() + timeout * 1_000_000_000L);
            }
        }
    }

    /** What the stream holds first, then its changes as they come, until it ends or the deadline passes. */
    private static void write(HttpExchange exchange, PodFeed.Subscription stream, long deadline) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", PodWatchList.ACCEPT);
        exchange.sendResponseHeaders(200, 0);
        OutputStream out = exchange.getResponseBody();
        for (byte[] frame : stream.first()) {
            out.write(frame);
        }
        out.flush();
        try {
            while (!stream.ended() && System.nanoTime() < deadline) {
                byte[] frame = stream.next(Math.min(POLL_MS, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)));
                if (frame == null) {
                    continue;
                }
                out.write(frame);
                for (byte[] more; (more = stream.next(0)) != null; ) {
                    out.write(more);
                }
                out.flush();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static long parseTimeout(String seconds) {
        try {
            long s = seconds == null ? DEFAULT_TIMEOUT_S : Long.parseLong(seconds);
            return s <= 0 ? DEFAULT_TIMEOUT_S : Math.min(s, DEFAULT_TIMEOUT_S);
        } catch (NumberFormatException e) {
            return DEFAULT_TIMEOUT_S;
        }
    }

    private static void refuse(HttpExchange exchange, int code, String why) throws IOException {
        byte[] body = (why + "\n").getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
        exchange.sendResponseHeaders(code, body.length);
        exchange.getResponseBody().write(body);
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> out = new HashMap<>();
        if (raw != null) {
            for (String pair : raw.split("&")) {
                int eq = pair.indexOf('=');
                String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
                out.put(key, eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
