package io.npmagent.harness.cli;

import io.npmagent.agent.run.AgentStatus;
import io.npmagent.harness.sandbox.Sandbox;
import io.npmagent.harness.sandbox.NodeStatus;
import io.npmagent.harness.sandbox.SandboxLifecycle;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import io.npmagent.agent.cli.ExitCodes;
import io.npmagent.agent.cli.Main;
import io.npmagent.agent.cli.BandwidthOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code sandbox up}: one or more nodes of a real cluster (control plane, the nodes, kube-proxy on each;
 * see {@code SandboxDaemon}) with the manifest directory applied through the API server: a network
 * namespace per pod on the node it is placed on (addresses from {@code status.podIP}/{@code podIPs}, or
 * assigned), servers on every declared TCP and UDP port, and on every node the agent enforcing from the
 * API server, as the DaemonSet does. The directory keeps being followed. Returns once it is applied and
 * enforced on every node; objects the API server refused are named on stderr.
 */
@Command(name = "up", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Bring up a sandbox node from a manifest directory, and keep it following the directory.")
final class SandboxUpCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    SandboxName name;

    @Option(names = "--manifests", required = true, paramLabel = "DIR", description = "Namespaces, Pods and NetworkPolicies.")
    Path manifests;

    @Option(names = "--backend", defaultValue = "auto", paramLabel = "NAME",
            description = "auto, bpf, iptables, iptables-nft, iptables-legacy or nft (default: ${DEFAULT-VALUE}).")
    String backend;

    @Option(names = "--kube-proxy-mode", defaultValue = "iptables", paramLabel = "MODE",
            description = "The mode of the node's kube-proxy: iptables or nftables (default: ${DEFAULT-VALUE}).")
    String kubeProxyMode;

    @Option(names = "--nodes", defaultValue = "1", paramLabel = "N",
            description = "How many nodes, 1 to 4 (default: ${DEFAULT-VALUE}), each with its own agent and kube-proxy; a pod's "
                    + "spec.nodeName places it, pods without one are spread round-robin in the order applied.")
    int nodes;

    @Mixin
    BandwidthOptions bandwidth;

    @Option(names = "--agent-config", paramLabel = "JSON",
            description = "Keys of the agent's configuration (as the ConfigMap's npm-agent.json) for every node's agent, e.g. "
                    + "'{\"Flows\": {\"Denied\": false}}'.")
    String agentConfig;

    @Option(names = "--wait-seconds", defaultValue = "60", paramLabel = "S", description = "How long to wait for the first apply.")
    long waitSeconds;

    @Override
    public Integer call() throws IOException {
        Sandbox sandbox = name.sandbox();
        try {
            AgentStatus status = SandboxLifecycle.up(sandbox, manifests, backend, kubeProxyMode, bandwidth.settings(), nodes, agentConfig,
                    Duration.ofSeconds(waitSeconds));
            String where = String.join(", ", sandbox.nodes().stream().map(n -> n.name() + " (namespace " + n.netns() + ")").toList());
            spec.commandLine().getOut().printf("sandbox %s is up: %s %s, %d pods, backend %s, %d policies applied%n"
                    + "  backend: %s%n  cluster: kube-apiserver with RBAC, kube-proxy (%s mode); kubectl --kubeconfig %s%n",
                    sandbox.name(), nodes == 1 ? "node" : nodes + " nodes", where, sandbox.pods().size(), status.backend(), status.policies(),
                    status.backendReason(), kubeProxyMode, sandbox.adminKubeconfig());
            NodeStatus node = NodeStatus.read(sandbox.dir());
            if (node != null) {
                node.rejected().forEach(r -> spec.commandLine().getErr().println("npm-agent sandbox up: not applied: " + r));
            }
            return ExitCodes.OK;
        } catch (SandboxLifecycle.UpFailed e) {
            spec.commandLine().getErr().println("npm-agent sandbox up: " + e.getMessage());
            return ExitCodes.FAILED;
        }
    }
}
