package io.npmagent.agent.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/**
 * One run of the CLI inside this process, with what it printed: what a shell would get, without a new
 * JVM. Tests run the commands with it; the harness runs its own command line (the agent's plus
 * {@code sandbox}) through {@link #of(CommandLine, String...)}.
 */
public record CliRun(int exitCode, String out, String err) {

    public static CliRun of(String... args) {
        return of(Main.commandLine(), args);
    }

    /** A run of {@code cli}, a command line built on {@link Main#commandLine()}. */
    public static CliRun of(CommandLine cli, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        int code = cli.execute(args);
        return new CliRun(code, out.toString(), err.toString());
    }
}
