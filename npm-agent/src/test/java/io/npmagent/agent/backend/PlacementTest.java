package io.npmagent.agent.backend;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The cgroup root a placement gets: as given on a cgroup2 node, the cgroup2 mount under it on a hybrid one. */
class PlacementTest {
    @TempDir
    Path dir;

    @Test
    void aCgroup2DirectoryIsTakenAsGiven() throws Exception {
        Files.writeString(dir.resolve("cgroup.controllers"), "cpu memory\n");
        Files.createDirectories(dir.resolve("unified"));
        Files.writeString(dir.resolve("unified/cgroup.controllers"), "");
        assertThat(Backends.Placement.of(null, null, dir).cgroupRoot()).isEqualTo(dir);
    }

    @Test
    void aHybridNodesV1RootMeansItsUnifiedMount() throws Exception {
        Files.createDirectories(dir.resolve("unified"));
        Files.createDirectories(dir.resolve("cpu"));
        Files.writeString(dir.resolve("unified/cgroup.controllers"), "");
        assertThat(Backends.Placement.of(null, null, dir).cgroupRoot()).isEqualTo(dir.resolve("unified"));
    }

    @Test
    void noneStaysNoneAndAnythingElseIsTakenAsGiven() {
        assertThat(Backends.Placement.of(null, null, null).cgroupRoot()).isNull();
        assertThat(Backends.Placement.of(null, null, dir).cgroupRoot()).as("neither: the backend says it cannot link there").isEqualTo(dir);
    }
}
