package io.npmagent.agent.http;

import com.google.gson.GsonBuilder;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.npmagent.agent.run.Agent;
import io.npmagent.agent.run.AgentStatus;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * The agent's HTTP endpoints, on two listeners. The main one ({@code ListeningAddress:ListeningPort},
 * NPM's keys) serves {@code /metrics} (Prometheus text, or OpenMetrics when the scraper asks for it),
 * {@code /healthz} (the process answers) and {@code /readyz} (the source has been read whole, the
 * first state is in the kernel, and the backend refuses nothing). The debug one, bound to localhost unless configured otherwise, serves
 * {@code /debug/state}: what the agent holds, waits for and last got wrong, as JSON, and {@code /debug/flows}: the
 * node's flow verdicts ({@link FlowsEndpoint}), which hold pods' addresses and so never go on the main listener.
 * Only GET. The debug listener has threads of its own, so a follower of the flows never holds up a probe or a scrape.
 */
public final class AgentHttp implements AutoCloseable {
    private final HttpServer main;
    private final HttpServer debug;
    private final Agent agent;
    private final Supplier<AgentStatus> status;
    private final Supplier<Map<String, Integer>> objects;
    private final ExecutorService threads = Executors.newFixedThreadPool(2, r -> {
        Thread t = new Thread(r, "npm-agent-http");
        t.setDaemon(true);
        return t;
    });
    /** Unbounded only in form: followers are capped by {@link FlowsEndpoint#MAX_FOLLOWERS}, the rest answer at once. */
    private final ExecutorService debugThreads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "npm-agent-debug-http");
        t.setDaemon(true);
        return t;
    });

    private AgentHttp(HttpServer main, HttpServer debug, Agent agent, Supplier<AgentStatus> status, Supplier<Map<String, Integer>> objects) {
        this.main = main;
        this.debug = debug;
        this.agent = agent;
        this.status = status;
        this.objects = objects;
    }

    /**
     * Binds both listeners (port 0: any free port) and starts serving.
     *
     * @param objects how many objects of each kind the source holds (for /debug/state)
     */
    public static AgentHttp start(InetSocketAddress mainAddress, InetSocketAddress debugAddress, Agent agent, Supplier<AgentStatus> status,
            Supplier<Map<String, Integer>> objects) throws IOException {
        HttpServer main = HttpServer.create(mainAddress, 16);
        HttpServer debug;
        try {
            debug = HttpServer.create(debugAddress, 16);
        } catch (IOException e) {
            main.stop(0);
            throw e;
        }
        AgentHttp http = new AgentHttp(main, debug, agent, status, objects);
        main.createContext("/metrics", ex -> http.serve(ex, http::metrics));
        main.createContext("/healthz", ex -> http.serve(ex, e -> reply(e, 200, "text/plain", "ok\n")));
        main.createContext("/readyz", ex -> http.serve(ex, http::ready));
        debug.createContext("/debug/state", ex -> http.serve(ex, http::state));
        FlowsEndpoint flows = new FlowsEndpoint(agent.flows());
        debug.createContext("/debug/flows", ex -> http.serve(ex, flows::handle));
        main.setExecutor(http.threads);
        debug.setExecutor(http.debugThreads);
        main.start();
        debug.start();
        return http;
    }

    public InetSocketAddress mainAddress() {
        return main.getAddress();
    }

    public InetSocketAddress debugAddress() {
        return debug.getAddress();
    }

    private interface Handler {
        void handle(HttpExchange ex) throws IOException;
    }

    private void serve(HttpExchange ex, Handler handler) throws IOException {
        try (ex) {
            if (!ex.getRequestMethod().equals("GET") && !ex.getRequestMethod().equals("HEAD")) {
                reply(ex, 405, "text/plain", "only GET\n");
                return;
            }
            if (!ex.getRequestURI().getPath().equals(ex.getHttpContext().getPath())) {
                reply(ex, 404, "text/plain", "not found\n");
                return;
            }
            handler.handle(ex);
        } catch (RuntimeException e) {
            reply(ex, 500, "text/plain", "internal error: " + e.getClass().getSimpleName() + "\n");
        }
    }

    private void metrics(HttpExchange ex) throws IOException {
        String accept = String.valueOf(ex.getRequestHeaders().getFirst("Accept"));
        boolean openMetrics = accept.contains("application/openmetrics-text");
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        agent.writeMetrics(body, openMetrics);
        reply(ex, 200, openMetrics ? "application/openmetrics-text; version=1.0.0; charset=utf-8" : "text/plain; version=0.0.4; charset=utf-8",
                body.toByteArray());
    }

    /** Ready once a first state is in the kernel and nothing is refused; otherwise 503 and why. */
    private void ready(HttpExchange ex) throws IOException {
        AgentStatus s = status.get();
        if (s != null && !s.denied().isEmpty()) {
            reply(ex, 503, "text/plain", "not ready: " + String.join("; ", s.denied()) + "\n");
        } else if (s == null || s.seenGeneration() == 0) {
            reply(ex, 503, "text/plain", "not ready: the source has not been read whole yet (informer caches not synced)\n");
        } else if (s.appliedGeneration() == 0) {
            reply(ex, 503, "text/plain", "not ready: the first state is not in the kernel yet\n");
        } else if (!s.failures().isEmpty()) {
            reply(ex, 503, "text/plain", "not ready: the backend refuses " + s.failures().size() + " parts (first: " + s.failures().get(0) + ")\n");
        } else {
            reply(ex, 200, "text/plain", "ready\n");
        }
    }

    private void state(HttpExchange ex) throws IOException {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("status", status.get());
        doc.put("objects", objects.get());
        doc.put("pendingPolicies", agent.pendingPolicies());
        doc.put("queue", agent.queueConfig().toString());
        reply(ex, 200, "application/json", new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().serializeNulls().create().toJson(doc) + "\n");
    }

    static void reply(HttpExchange ex, int code, String type, String body) throws IOException {
        reply(ex, code, type, body.getBytes(StandardCharsets.UTF_8));
    }

    private static void reply(HttpExchange ex, int code, String type, byte[] body) throws IOException {
        ex.getResponseHeaders().set("Content-Type", type);
        boolean head = ex.getRequestMethod().equals("HEAD");
        ex.sendResponseHeaders(code, head ? -1 : body.length);
        if (!head) {
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        }
    }

    @Override
    public void close() {
        main.stop(0);
        debug.stop(0);
        threads.shutdownNow();
        debugThreads.shutdownNow();
    }
}
