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
 * {@code sandbox up}: a node of a real cluster (control plane, the node, kube-proxy; see
 * {@code SandboxDaemon}) with the manifest directory applied through the API server: a network
 * namespace per pod (addresses from {@code status.podIP}/{@code podIPs}, or assigned), servers on every
 * declared TCP and UDP port, and the agent enforcing from the API server, as the DaemonSet does. The
 * directory keeps being followed. Returns once it is applied and enforced; objects the API server
 * refused are named on stderr.
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

    @Mixin
    BandwidthOptions bandwidth;

    @Option(names = "--wait-seconds", defaultValue = "60", paramLabel = "S", description = "How long to wait for the first apply.")
    long waitSeconds;

    @Override
    public Integer call() throws IOException {
        Sandbox sandbox = name.sandbox();
        try {
            AgentStatus status = SandboxLifecycle.up(sandbox, manifests, backend, kubeProxyMode, bandwidth.settings(), Duration.ofSeconds(waitSeconds));
            spec.commandLine().getOut().printf("sandbox %s is up: node %s (namespace %s), %d pods, backend %s, %d policies applied%n"
                    + "  backend: %s%n  cluster: kube-apiserver with RBAC, kube-proxy (%s mode); kubectl --kubeconfig %s%n",
                    sandbox.name(), sandbox.nodeName(), sandbox.nodeNetns(), sandbox.pods().size(), status.backend(), status.policies(),
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
