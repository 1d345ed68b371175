package io.npmagent.harness.cli;

import io.npmagent.agent.cli.ExitCodes;
import io.npmagent.agent.cli.Main;
import io.npmagent.harness.sandbox.Sandbox;
import io.npmagent.harness.sandbox.SandboxNode;
import java.io.IOException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code sandbox nodes}: the sandbox's nodes, a line each: the node's name and its network namespace. */
@Command(name = "nodes", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Print the sandbox's nodes: each node's name and network namespace, a line each.")
final class SandboxNodesCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    SandboxName name;

    @Override
    public Integer call() {
        Sandbox sandbox = name.sandbox();
        try {
            for (SandboxNode node : sandbox.nodes()) {
                spec.commandLine().getOut().println(node.name() + "\t" + node.netns());
            }
            return ExitCodes.OK;
        } catch (IOException e) {
            spec.commandLine().getErr().println("npm-agent sandbox nodes: " + e.getMessage());
            return ExitCodes.USAGE;
        }
    }
}
