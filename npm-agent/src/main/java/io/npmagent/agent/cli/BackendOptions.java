package io.npmagent.agent.cli;

import io.npmagent.agent.backend.Backends;
import io.npmagent.dataplane.backend.Backend;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.iptables.exec.CommandRunner;
import io.npmagent.iptables.exec.ProcessRunner;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import picocli.CommandLine.Option;

/** {@code --backend NAME [--netns NS]}, shared by the commands that touch the kernel. */
final class BackendOptions {
    @Option(names = "--backend", defaultValue = "iptables", paramLabel = "NAME",
            description = "iptables (the variant the node uses), iptables-nft, iptables-legacy or nft (default: ${DEFAULT-VALUE}).")
    String backend;

    @Option(names = "--netns", paramLabel = "NS",
            description = "Work inside this network namespace (ip netns) instead of the agent's own.")
    String netns;

    CommandRunner runner() {
        return netns == null ? ProcessRunner.host() : ProcessRunner.inNamespace(netns);
    }

    Backend create() {
        return create(new Metrics(new PrometheusRegistry()));
    }

    Backend create(Metrics metrics) {
        return Backends.create(backend, runner(), metrics);
    }
}
