package io.npmagent.agent.config;

import io.npmagent.dataplane.model.ApiSyntax;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * Follows the configuration file. A ConfigMap mount changes by swapping a symlink, so the file is
 * read again at each {@link #poll()} and compared by content. A file that cannot be used is logged
 * with every bad key and why, and the configuration in force stays; a good one is handed to
 * {@code apply} (which takes what can change at run time) and what needs a restart is logged.
 */
public final class ConfigWatcher {
    private static final System.Logger LOG = System.getLogger(ConfigWatcher.class.getName());

    private final Path file;
    private final Consumer<AgentConfig> apply;
    private String lastText;
    /** The last usable file's configuration. */
    private AgentConfig fromFile;
    /** What the agent runs with: the run-time keys of the last usable file, the rest as it started. */
    private AgentConfig inForce;

    /** {@code loaded}: the configuration the agent started with, read from {@code file}. */
    public ConfigWatcher(Path file, AgentConfig loaded, Consumer<AgentConfig> apply) throws IOException {
        this.file = file;
        this.apply = apply;
        this.lastText = Files.readString(file, StandardCharsets.UTF_8);
        this.fromFile = loaded;
        this.inForce = loaded;
    }

    /** Reads the file (the agent's start) and reports what it ignored; throws with every problem when it is not usable. */
    public static AgentConfig load(Path file) throws IOException, AgentConfig.Rejected {
        AgentConfig.Loaded loaded = AgentConfig.parse(Files.readString(file, StandardCharsets.UTF_8));
        loaded.ignored().forEach(k -> LOG.log(System.Logger.Level.INFO, "config {0}: {1} ignored", file, k));
        return loaded.config();
    }

    /** What the agent runs with: the run-time keys of the last usable file, the rest as it started. */
    public synchronized AgentConfig inForce() {
        return inForce;
    }

    /** Looks at the file once; returns what a change did, or null when the file is unchanged or rejected. */
    public synchronized ConfigReload poll() {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "config {0} unreadable ({1}); keeping the configuration in force", file, e.getMessage());
            return null;
        }
        if (text.equals(lastText)) {
            return null;
        }
        lastText = text;
        AgentConfig next;
        try {
            next = AgentConfig.parse(text).config();
        } catch (AgentConfig.Rejected e) {
            e.problems().forEach(p -> LOG.log(System.Logger.Level.ERROR, "config {0} rejected, keeping the configuration in force: {1}",
                    file, ApiSyntax.escapeControls(p)));
            return null;
        }
        ConfigReload reload = ConfigReload.between(fromFile, next);
        fromFile = next;
        AgentConfig taken = inForce.withRunTimeKeysOf(next);

        if (!taken.equals(inForce)) {
            inForce = taken;
            apply.accept(taken);
            LOG.log(System.Logger.Level.INFO, "config {0}: applied {1}", file, String.join(", ", reload.applied()));
        }
        if (!reload.restartNeeded().isEmpty()) {
            LOG.log(System.Logger.Level.WARNING, "config {0}: restart needed for {1}; running with the values it started with", file,
                    String.join(", ", reload.restartNeeded()));
        }
        return reload;
    }
}
