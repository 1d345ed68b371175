package io.npmagent.agent.cli;

import io.npmagent.agent.source.manifest.Manifests;
import io.npmagent.agent.source.manifest.ParsedManifests;
import java.io.IOException;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --manifests DIR}, shared by the commands that read a manifest directory. */
final class ManifestDirOption {
    @Option(names = "--manifests", required = true, paramLabel = "DIR",
            description = "Directory of Namespace, Pod and NetworkPolicy manifests (*.yaml, *.yml, *.json).")
    Path dir;

    ParsedManifests load() throws IOException {
        return Manifests.load(dir);
    }
}
