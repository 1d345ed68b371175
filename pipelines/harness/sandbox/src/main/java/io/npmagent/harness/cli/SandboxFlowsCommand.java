package io.npmagent.harness.cli;

import io.npmagent.agent.cli.ExitCodes;
import io.npmagent.agent.cli.Main;
import io.npmagent.harness.sandbox.Sandbox;
import io.npmagent.harness.sandbox.SandboxFlows;
import io.npmagent.harness.sandbox.SandboxNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code sandbox flows}: the flow verdicts of every node's agent ({@code npm-agent flows} on each). JSON: one
 * object a line, every node's together, latest first, each naming its node. Text: each node's lines under its
 * name. Exit 0, 2 for a bad option or sandbox, 4 when a node's agent does not answer.
 */
@Command(name = "flows", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Print the flow verdicts of the sandbox's agents: what each node's kernel denied, and which policy decided.")
final class SandboxFlowsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    SandboxName name;

    @Option(names = "--output", defaultValue = "text", paramLabel = "FORMAT", description = "text or json (default: ${DEFAULT-VALUE}).")
    String output;

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        if (!output.equals("json") && !output.equals("text")) {
            spec.commandLine().getErr().println("npm-agent sandbox flows: --output is text or json, not " + output);
            return ExitCodes.USAGE;
        }
        Sandbox sandbox = name.sandbox();
        List<List<String>> perNode = new ArrayList<>();
        List<String> names = new ArrayList<>();
        try {
            for (SandboxNode node : sandbox.nodes()) {
                perNode.add(SandboxFlows.fetch(SandboxFlows.Listener.of(node), output));
                names.add(node.name());
            }
        } catch (IOException e) {
            spec.commandLine().getErr().println("npm-agent sandbox flows: sandbox " + sandbox.name() + ": " + e.getMessage() + " (is it up?)");
            return ExitCodes.FAILED;
        }
        if (output.equals("json")) {
            SandboxFlows.mergeJson(perNode).forEach(out::println);
        } else {
            for (int i = 0; i < names.size(); i++) {
                out.println("node " + names.get(i) + ": " + perNode.get(i).size() + " flows");
                perNode.get(i).forEach(l -> out.println("  " + l));
            }
        }
        out.flush();
        return ExitCodes.OK;
    }
}
