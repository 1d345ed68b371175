package io.npmagent.agent.source.manifest;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.model.PolicyKey;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ManifestDirectoryTest {
    @TempDir
    Path dir;

    private static String policy(String name) {
        return "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: " + name + ", namespace: x}\nspec: {podSelector: {}}\n";
    }

    @Test
    void aScanHappensOnlyWhenTheContentChanged() throws IOException {
        Files.writeString(dir.resolve("a.yaml"), policy("p"));
        ManifestDirectory source = new ManifestDirectory(dir);
        ManifestDirectory.Snapshot first = source.scan();
        assertThat(first.state().policies()).containsOnlyKeys(new PolicyKey("x", "p"));
        assertThat(first.hash()).isEqualTo(ManifestDirectory.hash(dir)).hasSize(24);
        assertThat(source.scan()).as("unchanged").isNull();

        Files.writeString(dir.resolve("notes.txt"), "not a manifest");
        assertThat(source.scan()).as("other files do not count").isNull();

        Files.writeString(dir.resolve("b.yaml"), policy("q"));
        ManifestDirectory.Snapshot second = source.scan();
        assertThat(second.hash()).isNotEqualTo(first.hash());
        assertThat(second.state().policies()).hasSize(2);
    }

    @Test
    void aBrokenEditKeepsTheObjectsItDroppedAndACleanEditRemovesThem() throws IOException {
        Files.writeString(dir.resolve("a.yaml"), policy("p") + "---\n" + policy("q"));
        ManifestDirectory source = new ManifestDirectory(dir);
        source.scan();

        Files.writeString(dir.resolve("a.yaml"), policy("p") + "---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: [half");
        ManifestDirectory.Snapshot broken = source.scan();
        assertThat(broken.state().policies()).as("q is kept while its file does not load")
                .containsOnlyKeys(new PolicyKey("x", "p"), new PolicyKey("x", "q"));
        assertThat(broken.problems()).anyMatch(p -> p.contains("kept NetworkPolicy x/q as it was"));

        Files.writeString(dir.resolve("a.yaml"), policy("p"));
        ManifestDirectory.Snapshot clean = source.scan();
        assertThat(clean.state().policies()).containsOnlyKeys(new PolicyKey("x", "p"));
        assertThat(clean.problems()).isEmpty();
    }

    @Test
    void theSameObjectInTwoFilesIsAProblemAndTheLaterFileWins() throws IOException {
        Files.writeString(dir.resolve("a.yaml"), policy("p"));
        Files.writeString(dir.resolve("b.yaml"), policy("p").replace("podSelector: {}", "podSelector: {matchLabels: {app: b}}"));
        ManifestDirectory.Snapshot s = new ManifestDirectory(dir).scan();
        assertThat(s.problems()).singleElement().asString().contains("NetworkPolicy x/p is in both a.yaml and b.yaml");
        assertThat(s.state().policies().get(new PolicyKey("x", "p")).podSelector().matchLabels()).containsEntry("app", "b");
    }
}
