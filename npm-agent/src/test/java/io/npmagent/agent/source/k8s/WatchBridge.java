package io.npmagent.agent.source.k8s;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.net.URLDecoder;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Stands between the agent and fabric8's mock server. The mock server serves watches only over
 * WebSocket (which a real API server also offers), while client-java watches over a streamed HTTP
 * response (which a real API server also offers); the bridge carries each watch event, unchanged, from
 * the one transport to the other, and forwards every other request as it is. When the mock server goes
 * away, the streams it fed end, exactly as an API server restart ends a client's watches.
 *
 * <p>A watch from a resource version gets only the events after it, as from an API server (the mock
 * server replays every object it holds at the start of each watch). Everything else a test of the
 * agent's source needs (paging, 410 Gone, restarts, the record of its requests) comes from a real API
 * server ({@code io.npmagent.harness.controlplane.TestCluster}); the mock is kept for the one fault no real
 * server produces ({@code UnparsableObjectMockServerTest}).
 */
final class WatchBridge implements AutoCloseable {
    private static final String END = new String("end of stream");

    private final int upstreamPort;
    private final HttpServer server;
    /** HTTP/1.1: the default would offer the mock server an h2c upgrade, under which its large responses stall. */
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "watch-bridge");
        t.setDaemon(true);
        return t;
    });

    WatchBridge(int upstreamPort) throws IOException {
        this.upstreamPort = upstreamPort;
        this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        server.setExecutor(threads);
        server.createContext("/", ex -> {
            try {
                String target = ex.getRequestURI().getRawPath() + (ex.getRequestURI().getRawQuery() == null ? "" : "?" + ex.getRequestURI().getRawQuery());
                if (target.contains("watch=true")) {
                    watch(ex, target);
                } else {
                    forward(ex, target);
                }
            } catch (IOException | RuntimeException e) {
                // The client went away, or the upstream did: the client sees its stream end.
            } finally {
                ex.close();
            }
        });
        server.start();
    }

    int port() {
        return server.getAddress().getPort();
    }

    private static long since(String resourceVersion) {
        try {
            return resourceVersion == null ? 0 : Long.parseLong(resourceVersion);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** An ADDED event for an object that existed at resource version {@code since} (a DELETED one keeps its old version). */
    private static boolean replayed(String event, long since) {
        JsonObject e = JsonParser.parseString(event).getAsJsonObject();
        JsonObject object = e.getAsJsonObject("object");
        JsonObject meta = object == null ? null : object.getAsJsonObject("metadata");
        return "ADDED".equals(e.has("type") ? e.get("type").getAsString() : null) && meta != null && meta.has("resourceVersion")
                && since(meta.get("resourceVersion").getAsString()) <= since;
    }

    private static String query(HttpExchange ex, String name) {
        String q = ex.getRequestURI().getRawQuery();
        if (q == null) {
            return null;
        }
        for (String kv : q.split("&")) {
            int eq = kv.indexOf('=');
            if (eq > 0 && kv.substring(0, eq).equals(name)) {
                return URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8);
            }
        }
        return null;
    }

    private record Upstream(int status, String type, byte[] body) {}

    private Upstream get(String target) throws IOException {
        return send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + upstreamPort + target)).GET().build());
    }

    private Upstream send(HttpRequest request) throws IOException {
        try {
            HttpResponse<byte[]> r = client.send(request, HttpResponse.BodyHandlers.ofByteArray());
            return new Upstream(r.statusCode(), r.headers().firstValue("Content-Type").orElse("application/json"), r.body());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    private static void reply(HttpExchange ex, int status, String type, byte[] body) throws IOException {
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            try (OutputStream o = ex.getResponseBody()) {
                o.write(body);
            }
        }
    }

    private void forward(HttpExchange ex, String target) throws IOException {
        byte[] body = ex.getRequestBody().readAllBytes();
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + upstreamPort + target))
                .method(ex.getRequestMethod(), body.length == 0 ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        String type = ex.getRequestHeaders().getFirst("Content-Type");
        if (type != null) {
            request.header("Content-Type", type);
        }
        Upstream r = send(request.build());
        reply(ex, r.status, r.type, r.body);
    }

    private void watch(HttpExchange ex, String target) throws IOException {
        ex.getResponseHeaders().set("Content-Type", "application/json");
        BlockingQueue<String> events = new LinkedBlockingQueue<>();
        WebSocket socket;
        try {
            socket = client.newWebSocketBuilder().buildAsync(URI.create("ws://127.0.0.1:" + upstreamPort + target), new WebSocket.Listener() {
                private final StringBuilder partial = new StringBuilder();

                @Override
                public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
                    partial.append(data);
                    if (last) {
                        events.add(partial.toString());
                        partial.setLength(0);
                    }
                    ws.request(1);
                    return null;
                }

                @Override
                public CompletionStage<?> onClose(WebSocket ws, int status, String reason) {
                    events.add(END);
                    return null;
                }

                @Override
                public void onError(WebSocket ws, Throwable error) {
                    events.add(END);
                }
            }).get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            ex.sendResponseHeaders(503, -1);
            return;
        }
        ex.sendResponseHeaders(200, 0);
        long since = since(query(ex, "resourceVersion"));
        try (OutputStream o = ex.getResponseBody()) {
            while (true) {
                String event = events.take();
                if (event == END) {
                    return;
                }
                if (since > 0 && replayed(event, since)) {
                    // The mock server starts a watch with every object it holds, as ADDED; an API server
                    // sends only what changed after the resource version asked for.
                    continue;
                }
                o.write((event.strip() + "\n").getBytes(StandardCharsets.UTF_8));
                o.flush();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            socket.abort();
        }
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
