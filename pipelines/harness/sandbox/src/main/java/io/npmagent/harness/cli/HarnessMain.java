package io.npmagent.harness.cli;

import io.npmagent.agent.cli.CliRun;
import io.npmagent.agent.cli.Main;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine;

/**
 * The command {@code npm-agent/bin/npm-agent} runs from a checkout: the agent's own command line
 * ({@link Main}, exactly as the image has it) with {@code sandbox} added. The sandbox lives in the
 * harness, which the agent's jar and image never hold; so the subcommand exists only where the harness
 * is on the classpath, and the agent's image answers {@code npm-agent sandbox} with a usage error.
 */
public final class HarnessMain {
    private HarnessMain() {}

    /** The agent's command line plus {@code sandbox}, for {@link #main} and for tests that run it in process. */
    public static CommandLine commandLine() {
        CommandLine cli = Main.commandLine().addSubcommand(new SandboxCommand());
        Map<String, String> codes = new LinkedHashMap<>(cli.getCommandSpec().usageMessage().exitCodeList());
        codes.put("4", "apply, uninstall: the kernel refused; sandbox up: it could not be brought up; flows, sandbox flows: an agent could not be reached");
        codes.put("5", "sandbox probe: the sandbox did not apply its manifests in time");
        cli.getCommandSpec().usageMessage().exitCodeList(codes);
        return cli;
    }

    /** One run inside this process, with what it printed: how pipelines and tests drive the sandbox. */
    public static CliRun run(String... args) {
        return CliRun.of(commandLine(), args);
    }

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }
}
