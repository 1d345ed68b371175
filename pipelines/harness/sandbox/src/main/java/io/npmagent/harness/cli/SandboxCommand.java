package io.npmagent.harness.cli;

import picocli.CommandLine;
import io.npmagent.agent.cli.Main;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code npm-agent sandbox}: a local node in network namespaces, for trying the agent without a cluster
 * and for checking enforcement with real packets. See {@code npm-agent sandbox up --help}.
 */
@Command(name = "sandbox", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "A local node in network namespaces: pods with servers, and the agent enforcing between them.",
        subcommands = {SandboxUpCommand.class, SandboxProbeCommand.class, SandboxExecCommand.class, SandboxDownCommand.class,
            SandboxMetricsCommand.class, SandboxKubeconfigCommand.class, SandboxNodesCommand.class, SandboxNodeCommand.class,
            SandboxFlowsCommand.class})
final class SandboxCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a sandbox subcommand is required");
    }
}
