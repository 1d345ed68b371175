package io.npmagent.harness.cli;

import io.npmagent.harness.sandbox.Sandbox;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code --name N}, shared by the sandbox commands; a bad name is a usage error (exit 2). */
final class SandboxName {
    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    @Option(names = "--name", defaultValue = "default", paramLabel = "N",
            description = "Which sandbox (default: ${DEFAULT-VALUE}); several can exist side by side.")
    String name;

    Sandbox sandbox() {
        try {
            return Sandbox.named(name);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(command.commandLine(), e.getMessage());
        }
    }
}
