package io.npmagent.agent.run;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * What the agent reports about convergence, as {@code status.json} in its state directory: the manifest
 * generation (content hash) it has seen, the one whose state is in the kernel, and what is wrong. A tool
 * that wrote the directory waits until {@code appliedHash} is the hash of what it wrote. Against the API
 * server the hashes are {@link io.npmagent.agent.source.k8s.StateDigest}s of the objects' versions the
 * model has taken, which a tool compares with one of what the server holds.
 *
 * @param backendReason why this backend (auto's probe, or "as asked")
 * @param seenHash     the directory generation the agent has read
 * @param appliedHash  the generation whose whole state is in the kernel ("" until the first)
 * @param podsHash     in a sandbox, the generation whose pods exist with their servers ("" otherwise)
 * @param denied       what the API server refuses the agent (verb, resource, the server's message); not ready while any
 */
public record AgentStatus(String backend, String backendReason, String seenHash, long seenGeneration, String appliedHash, long appliedGeneration,
        String podsHash, int policies, List<String> failures, List<String> problems, List<String> denied, String updated) {

    private static final Gson GSON = new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create();

    public AgentStatus {
        failures = List.copyOf(failures);
        problems = List.copyOf(problems);
        denied = denied == null ? List.of() : List.copyOf(denied);
    }

    public static final String FILE = "status.json";

    /** Writes the status atomically (a reader never sees half of it). */
    public void write(Path stateDir) throws IOException {
        Path tmp = stateDir.resolve(FILE + ".tmp");
        Files.writeString(tmp, GSON.toJson(this), StandardCharsets.UTF_8);
        Files.move(tmp, stateDir.resolve(FILE), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** The status in {@code stateDir}, or null if there is none yet. */
    public static AgentStatus read(Path stateDir) throws IOException {
        Path file = stateDir.resolve(FILE);
        if (!Files.exists(file)) {
            return null;
        }
        return GSON.fromJson(Files.readString(file, StandardCharsets.UTF_8), AgentStatus.class);
    }
}
