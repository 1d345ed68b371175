package io.npmagent.agent.cli;

import io.npmagent.agent.sandbox.Sandbox;
import picocli.CommandLine.Option;

/** {@code --name N}, shared by the sandbox commands. */
final class SandboxName {
    @Option(names = "--name", defaultValue = "default", paramLabel = "N",
            description = "Which sandbox (default: ${DEFAULT-VALUE}); several can exist side by side.")
    String name;

    Sandbox sandbox() {
        return Sandbox.named(name);
    }
}
