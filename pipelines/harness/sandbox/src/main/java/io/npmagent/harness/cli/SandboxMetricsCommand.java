package io.npmagent.harness.cli;

import io.npmagent.agent.run.ManifestLoop;
import io.npmagent.harness.sandbox.Sandbox;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import io.npmagent.agent.cli.ExitCodes;
import io.npmagent.agent.cli.Main;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code sandbox metrics}: a sandbox node's agent's metrics, in Prometheus text format (refreshed every second). */
@Command(name = "metrics", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Print the sandbox agent's metrics (Prometheus text format).")
final class SandboxMetricsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    SandboxName name;

    @Option(names = "--grep", paramLabel = "TEXT", description = "Only lines containing TEXT (comments are left out).")
    String grep;

    @Option(names = "--node", paramLabel = "NODE", description = "Whose agent (default: the first node; sandbox nodes lists them).")
    String node;

    @Override
    public Integer call() throws IOException {
        Sandbox sandbox = name.sandbox();
        Path dir;
        try {
            dir = node == null ? sandbox.node(0).stateDir() : sandbox.node(node).stateDir();
        } catch (IllegalArgumentException e) {
            spec.commandLine().getErr().println("npm-agent sandbox metrics: " + e.getMessage());
            return ExitCodes.USAGE;
        }
        Path file = dir.resolve(ManifestLoop.METRICS_FILE);
        if (!Files.exists(file)) {
            spec.commandLine().getErr().println("npm-agent sandbox metrics: sandbox " + sandbox.name() + " has no metrics (is it up?)");
            return ExitCodes.USAGE;
        }
        for (String line : Files.readAllLines(file)) {
            if (grep == null || (!line.startsWith("#") && line.contains(grep))) {
                spec.commandLine().getOut().println(line);
            }
        }
        return ExitCodes.OK;
    }
}
