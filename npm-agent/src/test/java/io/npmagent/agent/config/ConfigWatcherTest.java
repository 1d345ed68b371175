package io.npmagent.agent.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigWatcherTest {
    @TempDir
    Path dir;

    @Test
    void runTimeKeysApplyTheRestWaitForARestartAndABadFileChangesNothing() throws Exception {
        Path file = dir.resolve("npm.json");
        Files.writeString(file, "{\"NetPolInBackground\": true, \"Backend\": \"bpf\"}");
        List<AgentConfig> applied = new ArrayList<>();
        ConfigWatcher watcher = new ConfigWatcher(file, ConfigWatcher.load(file), applied::add);
        assertThat(watcher.poll()).as("unchanged").isNull();

        Files.writeString(file, "{\"NetPolInBackground\": false, \"Backend\": \"nft\", \"NetPolIntervalInMilliseconds\": 100, "
                + "\"NetPolAdaptiveBatching\": false}");
        ConfigReload r = watcher.poll();
        assertThat(r.applied()).containsExactlyInAnyOrder("NetPolInBackground", "NetPolAdaptiveBatching", "NetPolIntervalInMilliseconds");
        assertThat(r.restartNeeded()).containsExactly("Backend");
        assertThat(applied).singleElement().satisfies(c -> {
            assertThat(c.queue().background()).isFalse();
            assertThat(c.queue().interval()).isEqualTo(Duration.ofMillis(100));
            assertThat(c.backend()).as("needs a restart: as it started").isEqualTo("bpf");
        });
        assertThat(watcher.inForce().queue().background()).isFalse();

        Files.writeString(file, "{\"NetPolInBackground\": \"maybe\"}");
        assertThat(watcher.poll()).as("rejected").isNull();
        assertThat(applied).hasSize(1);
        assertThat(watcher.inForce().queue().background()).as("the configuration in force stays").isFalse();

        Files.writeString(file, "{\"NetPolInBackground\": true, \"Backend\": \"nft\", \"NetPolIntervalInMilliseconds\": 100}");
        assertThat(watcher.poll().applied()).as("a key left out goes back to its default").containsExactlyInAnyOrder("NetPolInBackground", "NetPolAdaptiveBatching");
        assertThat(applied).hasSize(2);
        assertThat(applied.get(1).queue().background()).isTrue();
    }
}
