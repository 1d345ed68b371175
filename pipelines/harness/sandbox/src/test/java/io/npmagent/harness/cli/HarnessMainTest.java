package io.npmagent.harness.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.agent.cli.CliRun;
import org.junit.jupiter.api.Test;

class HarnessMainTest {

    @Test
    void theHarnessCommandLineIsTheAgentsPlusSandbox() {
        CliRun run = HarnessMain.run("--help");

        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).contains("compile", "explain", "run", "sandbox", "Exit codes:",
                "4   apply, uninstall: the kernel refused; sandbox up", "5   sandbox probe: the sandbox did not apply");
    }

    @Test
    void sandboxCommandsParse() {
        CliRun run = HarnessMain.run("sandbox", "--help");

        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).contains("up", "probe", "exec", "down", "metrics", "kubeconfig", "flows");
    }

    @Test
    void aBadSandboxNameIsAUsageError() {
        CliRun run = HarnessMain.run("sandbox", "probe", "--name", "../etc");

        assertThat(run.exitCode()).isEqualTo(2);
    }
}
