package io.npmagent.agent.cli;

import io.npmagent.agent.backend.Backends;
import io.npmagent.bpf.libbpf.BpfException;
import io.npmagent.dataplane.backend.BackendException;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code npm-agent uninstall}: removes every kernel object a backend creates (its chains and the jump
 * to them, its sets, its table; its tc filters and pinned maps), whatever run created them; with
 * {@code auto}, those of every backend. Stop the agent first: a running agent puts them back at its
 * next reconcile.
 */
@Command(name = "uninstall", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Remove everything a backend (auto: every backend) put in the kernel.")
final class UninstallCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    BackendOptions options;

    @Override
    public Integer call() {
        if (!Backends.NAMES.contains(options.backend)) {
            spec.commandLine().getErr().println("npm-agent uninstall: unknown backend \"" + options.backend + "\" (one of "
                    + String.join(", ", Backends.NAMES) + ")");
            return ExitCodes.USAGE;
        }
        List<String> removed;
        try {
            removed = Backends.uninstall(options.backend, options.placement());
        } catch (BackendException | BpfException | IllegalStateException e) {
            spec.commandLine().getErr().println("npm-agent uninstall: " + options.backend + ": " + e.getMessage());
            return ExitCodes.FAILED;
        }
        String where = options.netns == null ? "" : " in network namespace " + options.netns;
        spec.commandLine().getOut().println(removed.isEmpty()
                ? "npm-agent uninstall: no backend had anything installed" + where
                : "npm-agent uninstall: removed everything " + String.join(", ", removed) + " had installed" + where);
        return ExitCodes.OK;
    }
}
