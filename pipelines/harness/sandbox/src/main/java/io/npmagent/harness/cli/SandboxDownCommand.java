package io.npmagent.harness.cli;

import io.npmagent.harness.sandbox.Sandbox;
import io.npmagent.harness.sandbox.SandboxLifecycle;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.Callable;
import io.npmagent.agent.cli.ExitCodes;
import io.npmagent.agent.cli.Main;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code sandbox down}: removes everything of a sandbox, in whatever state it is, also after its agent crashed. */
@Command(name = "down", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Remove a sandbox: its agent, pods, namespaces and state.")
final class SandboxDownCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    SandboxName name;

    @Override
    public Integer call() throws IOException {
        Sandbox sandbox = name.sandbox();
        List<String> removed = SandboxLifecycle.down(sandbox);
        spec.commandLine().getOut().println(removed.isEmpty()
                ? "sandbox " + sandbox.name() + ": nothing to remove"
                : "sandbox " + sandbox.name() + " removed: " + String.join(", ", removed));
        return ExitCodes.OK;
    }
}
