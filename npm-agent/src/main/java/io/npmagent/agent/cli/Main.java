package io.npmagent.agent.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** The {@code npm-agent} command: the jar's entry point. Each subcommand is one class. */
@Command(
        name = "npm-agent",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "Kubernetes node agent enforcing NetworkPolicy.",
        subcommands = {CompileCommand.class, ExplainCommand.class, ApplyCommand.class, RunCommand.class, UninstallCommand.class, FlowsCommand.class,
            RelayCommand.class,
            CommandLine.HelpCommand.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:success (explain: the connection is allowed)",
            "1:the input has problems (compile and apply still do everything else)",
            "2:usage error",
            "3:explain: the connection is denied",
            "4:apply, uninstall: the kernel refused; flows: the agent could not be reached"
        })
public final class Main implements Runnable {
    @Spec
    CommandSpec spec;

    /** The command line with its subcommands, for {@link #main} and for tests that run it in process. */
    public static CommandLine commandLine() {
        return new CommandLine(new Main()).setCaseInsensitiveEnumValuesAllowed(true);
    }

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a subcommand is required");
    }

    /** The version the jar's manifest records (Maven writes it), or "development" when run from classes. */
    public static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Main.class.getPackage().getImplementationVersion();
            return new String[] {"npm-agent " + (v == null ? "development" : v)};
        }
    }
}
