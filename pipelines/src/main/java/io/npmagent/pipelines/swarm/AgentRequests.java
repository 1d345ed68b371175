package io.npmagent.pipelines.swarm;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.npmagent.agent.source.k8s.KubeSource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a real agent asks of the API server, read from the API server's audit log (the agent's
 * ServiceAccount's requests, at Metadata level): per collection it lists and watches, the list's query
 * (its first page, and a next page's if it paged) and the watch's; the other GETs it made (discovery);
 * its User-Agent. A swarm watcher replays exactly these, changing only what the server hands back
 * (resourceVersion, continue) and the watch's timeout, which client-java draws at random between five
 * and ten minutes for every watch.
 *
 * @param informers one per collection, in the order the agent first listed them
 * @param gets      the other GETs, in the order first made, each with the period it was repeated at
 */
record AgentRequests(String userAgent, List<Informer> informers, List<Poll> gets) {

    /**
     * A GET the agent makes, and how often: the median gap between its repeats in the log (the agent's discovery
     * asks every 30 s while ClusterNetworkPolicies are not served), or null if the log holds it once.
     */
    record Poll(String uri, java.time.Duration period) {}

    /**
     * One collection's list and watch.
     *
     * @param path      the collection, e.g. {@code /api/v1/pods}
     * @param listQuery the first page's query, exactly, or the WatchList's
     * @param pageQuery a next page's query with its continue token as {@code {continue}}, or null if the agent never paged
     * @param watchQuery the watch's query, its resourceVersion as {@code {rv}} and its timeoutSeconds as {@code {timeout}}
     * @param accept    the media type the list and the watch ask for: not in the audit log, so as the agent declares it
     *                  ({@link KubeSource#mediaType}); the calibration holds the two to the same cost
     */
    record Informer(String path, String listQuery, String pageQuery, String watchQuery, String accept) {
        String resource() {
            return resourceOf(path);
        }

        /** Whether the watch is a protobuf stream (the agent's pods), not JSON lines. */
        boolean protobufWatch() {
            return accept.startsWith("application/vnd.kubernetes.protobuf");
        }

        /** Whether the list is a WatchList: a watch whose initial events are every object, up to a bookmark. */
        boolean watchList() {
            return listQuery.contains("sendInitialEvents=true");
        }

        /** The first page's limit (500 if it had none): a next page asks for as many when the agent was never seen to page. */
        String limit() {
            for (String p : listQuery.split("&")) {
                if (p.startsWith("limit=")) {
                    return p.substring("limit=".length());
                }
            }
            return "500";
        }

        static String resourceOf(String path) {
            return path.substring(path.lastIndexOf('/') + 1);
        }
    }

    /** The agent's requests as {@code user} made them, from the audit log at {@code auditLog}; fails if it never watched. */
    static AgentRequests fromAuditLog(Path auditLog, String user) throws IOException {
        String agent = null;
        Map<String, String[]> byPath = new LinkedHashMap<>();
        Map<String, List<java.time.Instant>> gets = new LinkedHashMap<>();
        for (String line : Files.readAllLines(auditLog, StandardCharsets.UTF_8)) {
            if (line.isBlank()) {
                continue;
            }
            JsonObject e = JsonParser.parseString(line).getAsJsonObject();
            if (!user.equals(e.getAsJsonObject("user").get("username").getAsString())) {
                continue;
            }
            String verb = e.get("verb").getAsString();
            String stage = e.get("stage").getAsString();
            String uri = e.get("requestURI").getAsString();
            int q = uri.indexOf('?');
            String path = q < 0 ? uri : uri.substring(0, q);
            String query = q < 0 ? "" : uri.substring(q + 1);
            if (agent == null && e.has("userAgent")) {
                agent = e.get("userAgent").getAsString();
            }
            switch (verb) {
                case "list" -> {
                    if (!"ResponseComplete".equals(stage)) {
                        continue;
                    }
                    String[] shapes = byPath.computeIfAbsent(path, p -> new String[3]);
                    if (query.contains("continue=")) {
                        if (shapes[1] == null) {
                            shapes[1] = query.replaceAll("continue=[^&]*", "continue={continue}");
                        }
                    } else if (shapes[0] == null) {
                        shapes[0] = query;
                    }
                }
                case "watch" -> {
                    if (!"ResponseStarted".equals(stage)) {
                        continue;
                    }
                    String[] shapes = byPath.computeIfAbsent(path, p -> new String[3]);
                    if (query.contains("sendInitialEvents=true")) {
                        // A WatchList: the agent's list of this collection, every object sent as an event.
                        if (shapes[0] == null) {
                            shapes[0] = query;
                        }
                    } else if (shapes[2] == null) {
                        shapes[2] = query.replaceAll("resourceVersion=[^&]*", "resourceVersion={rv}")
                                .replaceAll("timeoutSeconds=[^&]*", "timeoutSeconds={timeout}");
                    }
                }
                case "get" -> {
                    if ("ResponseComplete".equals(stage)) {
                        gets.computeIfAbsent(uri, u -> new ArrayList<>()).add(java.time.Instant.parse(e.get("requestReceivedTimestamp").getAsString()));
                    }
                }
                default -> {
                    // Writes (Events) are the agent's own business, not what it costs to keep watching.
                }
            }
        }
        List<Informer> informers = new ArrayList<>();
        byPath.forEach((path, s) -> {
            if (s[0] != null && s[2] != null) {
                informers.add(new Informer(path, s[0], s[1], s[2], KubeSource.mediaType(Informer.resourceOf(path))));
            }
        });
        if (informers.isEmpty()) {
            throw new IllegalStateException("the audit log " + auditLog + " holds no list and watch of " + user);
        }
        List<Poll> polls = new ArrayList<>();
        gets.forEach((uri, times) -> polls.add(new Poll(uri, period(times))));
        return new AgentRequests(agent == null ? "" : agent, List.copyOf(informers), List.copyOf(polls));
    }

    private static java.time.Duration period(List<java.time.Instant> times) {
        if (times.size() < 2) {
            return null;
        }
        List<java.time.Duration> gaps = new ArrayList<>();
        for (int i = 1; i < times.size(); i++) {
            gaps.add(java.time.Duration.between(times.get(i - 1), times.get(i)));
        }
        gaps.sort(null);
        return gaps.get(gaps.size() / 2);
    }
}
