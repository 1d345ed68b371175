package io.npmagent.agent.cli;

import io.npmagent.agent.source.manifest.Manifests;
import io.npmagent.agent.source.manifest.ParsedManifests;
import io.npmagent.dataplane.model.ApiSyntax;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.policy.PolicyCompiler;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/** {@code --manifests DIR}, shared by the commands that read a manifest directory. */
final class ManifestDirOption {
    @Option(names = "--manifests", required = true, paramLabel = "DIR",
            description = "Directory of Namespace, Pod and NetworkPolicy manifests (*.yaml, *.yml, *.json).")
    Path dir;

    ParsedManifests load() throws IOException {
        return Manifests.load(dir);
    }

    /** The directory compiled from scratch for {@code node} (null: every pod), with every problem found, one per line. */
    record Compiled(ClusterState cluster, PolicyCompiler compiler, List<String> problems) {}

    Compiled compile(String node) throws IOException {
        ParsedManifests parsed = load();
        ClusterState cluster = parsed.toClusterState();
        PolicyCompiler compiler = new PolicyCompiler(node);
        cluster.asEvents().forEach(compiler::apply);
        List<String> problems = new ArrayList<>(parsed.errors());
        // errors() holds each invalid object's current errors: after a from-scratch compile, all of them.
        // An object's name is printed raw in a ValidationError: escape it so one problem stays one line.
        compiler.errors().values().forEach(list -> list.forEach(e -> problems.add(ApiSyntax.escapeControls(e.toString()))));
        return new Compiled(cluster, compiler, problems);
    }
}
