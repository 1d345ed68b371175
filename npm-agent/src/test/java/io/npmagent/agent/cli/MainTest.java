package io.npmagent.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class MainTest {

    @Test
    void helpListsTheCommandsAndExitCodes() {
        CliRun run = CliRun.of("--help");

        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).contains("compile", "explain", "Exit codes:", "3   explain: the connection is denied");
    }

    @Test
    void versionIsPrinted() {
        CliRun run = CliRun.of("--version");

        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).startsWith("npm-agent ");
    }

    @Test
    void noSubcommandIsAUsageError() {
        CliRun run = CliRun.of();

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("a subcommand is required").contains("Usage: npm-agent");
    }

    @Test
    void missingRequiredOptionIsAUsageError() {
        CliRun run = CliRun.of("compile");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("Missing required option: '--manifests=DIR'");
    }

    /** The sandbox is the harness's (pipelines/harness): the agent's own command line, which its image runs, has none. */
    @Test
    void theAgentHasNoSandboxCommand() {
        CliRun run = CliRun.of("sandbox", "up", "--manifests", "/nonexistent");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("Unmatched argument");
    }
}
