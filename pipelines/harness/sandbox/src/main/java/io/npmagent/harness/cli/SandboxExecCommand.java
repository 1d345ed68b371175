package io.npmagent.harness.cli;

import io.npmagent.harness.sandbox.Sandbox;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.Callable;
import io.npmagent.agent.cli.ExitCodes;
import io.npmagent.agent.cli.Main;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code sandbox exec NAMESPACE/POD -- COMMAND...}: runs a command inside a pod's network namespace (for
 * iperf3, curl, tcpdump), with the terminal's input and output, and exits with its exit code.
 */
@Command(name = "exec", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Run a command inside a sandbox pod's network namespace.")
final class SandboxExecCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    SandboxName name;

    @Parameters(index = "0", paramLabel = "NAMESPACE/POD")
    String pod;

    @Parameters(index = "1..*", paramLabel = "COMMAND", arity = "1..*", description = "The command and its arguments (after --).")
    List<String> command;

    @Override
    public Integer call() throws IOException, InterruptedException {
        Sandbox sandbox = name.sandbox();
        Sandbox.PodRecord record = sandbox.pods().stream().filter(p -> p.pod().equals(pod)).findFirst().orElse(null);
        if (record == null) {
            spec.commandLine().getErr().println("npm-agent sandbox exec: sandbox " + sandbox.name() + " has no pod " + pod);
            return ExitCodes.USAGE;
        }
        return new ProcessBuilder(record.command(command)).inheritIO().start().waitFor();
    }
}
