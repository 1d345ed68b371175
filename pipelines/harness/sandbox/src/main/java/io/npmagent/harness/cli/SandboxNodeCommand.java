package io.npmagent.harness.cli;

import io.npmagent.harness.sandbox.SandboxDaemon;
import java.io.IOException;
import java.util.concurrent.Callable;
import io.npmagent.agent.cli.ExitCodes;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** The sandbox's node daemon, which {@code sandbox up} starts inside the node namespace. Not for people. */
@Command(name = "node", hidden = true, description = "Run a sandbox's node daemon (started by sandbox up).")
final class SandboxNodeCommand implements Callable<Integer> {
    @Mixin
    SandboxName name;

    @Override
    public Integer call() throws IOException {
        SandboxDaemon.run(name.sandbox());
        return ExitCodes.OK;
    }
}
