package io.npmagent.agent.cli;

import io.npmagent.dataplane.desired.DesiredState;
import io.npmagent.dataplane.model.ClusterState;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code npm-agent compile}: what the agent would make of a manifest directory, without a cluster or a
 * kernel. Prints the problems in the input, the compiled desired state, and the reference evaluator's
 * reachability matrix. Everything is printed even when the input has problems (invalid parts fail
 * closed, and the output shows what that means); the exit code then is 1.
 */
@Command(name = "compile", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Compile a manifest directory: input problems, desired state, reachability matrix.")
final class CompileCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ManifestDirOption manifests;

    @Option(names = "--node", paramLabel = "NAME",
            description = "Compile for this node's pods only (default: every pod is local).")
    String node;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        ManifestDirOption.Compiled compiled;
        try {
            compiled = manifests.compile(node);
        } catch (IOException e) {
            err.println("npm-agent compile: cannot read --manifests " + manifests.dir + ": " + e.getMessage());
            return ExitCodes.USAGE;
        }
        ClusterState cluster = compiled.cluster();
        DesiredState desired = compiled.compiler().snapshot();
        List<String> problems = compiled.problems();

        out.println("# " + manifests.dir + ": " + cluster.namespaces().size() + " namespaces, "
                + cluster.pods().size() + " pods, " + cluster.policies().size() + " policies"
                + (cluster.clusterPolicies().isEmpty() ? "" : ", " + cluster.clusterPolicies().size() + " ClusterNetworkPolicies"));
        out.println("# problems in the input: " + (problems.isEmpty() ? "none" : problems.size()));
        problems.forEach(p -> out.println("  " + p));
        out.println("# desired state (" + (node == null ? "every pod local" : "node " + Text.name(node)) + ")");
        out.print(desired.dump());
        out.print(new ReachabilityMatrix(cluster).render());
        out.flush();
        if (!problems.isEmpty()) {
            err.println("npm-agent compile: " + problems.size() + " problem(s) in the input, listed above");
            return ExitCodes.INPUT_PROBLEMS;
        }
        return ExitCodes.OK;
    }
}
