package io.npmagent.harness.sandbox;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonSyntaxException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The flow verdicts of a sandbox: each node's agent asked on its debug listener ({@code /debug/flows}, at the
 * address the sandbox wrote into the agent's {@code agent-config.json}), the answers merged. A record is passed
 * on as its agent wrote it: each already names its node.
 */
public final class SandboxFlows {
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private SandboxFlows() {}

    /** A node's agent's debug listener. */
    public record Listener(String node, String host, int port) {
        /** Read from the configuration file the sandbox gave the node's agent. */
        public static Listener of(SandboxNode node) throws IOException {
            Path config = node.stateDir().resolve("agent-config.json");
            JsonObject o;
            try {
                o = JsonParser.parseString(Files.readString(config)).getAsJsonObject();
            } catch (JsonSyntaxException | IllegalStateException e) {
                throw new IOException(config + ": not the sandbox's agent configuration (" + e.getMessage() + ")");
            }
            return new Listener(node.name(), o.get("DebugListeningAddress").getAsString(), o.get("DebugListeningPort").getAsInt());
        }
    }

    /** One agent's flows, {@code json} or {@code text}, one a line; an agent that does not answer is an IOException naming its node. */
    public static List<String> fetch(Listener at, String output) throws IOException {
        URI uri = URI.create("http://" + at.host() + ":" + at.port() + "/debug/flows?output=" + output);
        try {
            HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IOException("the agent of node " + at.node() + " answered " + r.statusCode() + ": " + r.body().strip());
            }
            return r.body().lines().filter(l -> !l.isEmpty()).toList();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted");
        } catch (IOException e) {
            throw new IOException("the agent of node " + at.node() + " at " + at.host() + ":" + at.port() + " does not answer: " + e, e);
        }
    }

    /** JSON lines of every node, latest packet first across the nodes, each line as its agent wrote it. */
    public static List<String> mergeJson(List<List<String>> perNode) {
        List<String> all = new ArrayList<>();
        perNode.forEach(all::addAll);
        return all.stream().sorted(Comparator.comparing(SandboxFlows::last).reversed()).toList();
    }

    private static String last(String jsonLine) {
        JsonElement last = JsonParser.parseString(jsonLine).getAsJsonObject().get("last");
        return last == null || last.isJsonNull() ? "" : last.getAsString(); // ISO-8601 instants in UTC sort as text
    }
}
