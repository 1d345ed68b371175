package io.npmagent.harness.cli;

import io.npmagent.harness.sandbox.Sandbox;
import java.nio.file.Files;
import java.util.concurrent.Callable;
import io.npmagent.agent.cli.ExitCodes;
import io.npmagent.agent.cli.Main;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code sandbox kubeconfig}: the path of an admin kubeconfig for the sandbox's cluster, for {@code kubectl --kubeconfig}. */
@Command(name = "kubeconfig", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Print the path of an admin kubeconfig for the sandbox's cluster (kubectl --kubeconfig \"$(npm-agent sandbox kubeconfig)\").")
final class SandboxKubeconfigCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    SandboxName name;

    @Override
    public Integer call() {
        Sandbox sandbox = name.sandbox();
        if (!Files.exists(sandbox.adminKubeconfig())) {
            spec.commandLine().getErr().println("npm-agent sandbox kubeconfig: sandbox " + sandbox.name()
                    + " has no cluster (bring it up with: npm-agent sandbox up --name " + sandbox.name() + " --manifests DIR)");
            return ExitCodes.USAGE;
        }
        spec.commandLine().getOut().println(sandbox.adminKubeconfig());
        return ExitCodes.OK;
    }
}
