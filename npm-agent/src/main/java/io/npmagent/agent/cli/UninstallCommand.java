package io.npmagent.agent.cli;

import io.npmagent.dataplane.backend.Backend;
import io.npmagent.dataplane.backend.BackendException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code npm-agent uninstall}: removes every kernel object a backend creates (its chains and the jump
 * to them, its sets, its table), whatever run created them. Stop the agent first: a running agent puts
 * them back at its next reconcile.
 */
@Command(name = "uninstall", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Remove everything a backend put in the kernel.")
final class UninstallCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    BackendOptions options;

    @Override
    public Integer call() {
        Backend backend;
        try {
            backend = options.create();
        } catch (IllegalArgumentException | IllegalStateException e) {
            spec.commandLine().getErr().println("npm-agent uninstall: " + e.getMessage());
            return ExitCodes.USAGE;
        }
        try {
            backend.uninstall();
        } catch (BackendException e) {
            spec.commandLine().getErr().println("npm-agent uninstall: " + backend.name() + ": " + e.getMessage());
            return ExitCodes.FAILED;
        }
        spec.commandLine().getOut().println("npm-agent uninstall: removed everything " + backend.name() + " had installed"
                + (options.netns == null ? "" : " in network namespace " + options.netns));
        return ExitCodes.OK;
    }
}
