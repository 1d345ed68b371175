package io.npmagent.harness.sandbox;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * What the sandbox's node daemon reports, as {@code node.json}: the manifest directory generation whose
 * objects are all in the API server, the digest of the server's objects for which every pod on the node
 * is built (empty while the daemon still has writes to make), the objects the server refused, and
 * whether the agent runs.
 */
public record NodeStatus(String manifestsHash, String builtDigest, List<String> rejected, boolean agentRunning) {
    private static final Gson GSON = new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create();
    static final String FILE = "node.json";

    public NodeStatus {
        rejected = rejected == null ? List.of() : List.copyOf(rejected);
    }

    void write(Path dir) throws IOException {
        Path tmp = dir.resolve(FILE + ".tmp");
        Files.writeString(tmp, GSON.toJson(this), StandardCharsets.UTF_8);
        Files.move(tmp, dir.resolve(FILE), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    public static NodeStatus read(Path dir) throws IOException {
        Path file = dir.resolve(FILE);
        return Files.exists(file) ? GSON.fromJson(Files.readString(file, StandardCharsets.UTF_8), NodeStatus.class) : null;
    }
}
