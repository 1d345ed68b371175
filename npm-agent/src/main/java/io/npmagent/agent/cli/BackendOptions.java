package io.npmagent.agent.cli;

import io.npmagent.agent.backend.Backends;
import io.npmagent.dataplane.backend.Backend;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.exec.CommandRunner;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --backend NAME [--netns NS] [--bpffs DIR] [--cgroup-root DIR]}, shared by the commands that touch the kernel. */
final class BackendOptions {
    @Option(names = "--backend", defaultValue = "auto", paramLabel = "NAME",
            description = "auto (eBPF where the kernel allows, else iptables), bpf, iptables (the variant the node uses), "
                    + "iptables-nft, iptables-legacy or nft (default: ${DEFAULT-VALUE}).")
    String backend;

    @Option(names = "--netns", paramLabel = "NS",
            description = "Work inside this network namespace (ip netns) instead of the agent's own.")
    String netns;

    @Option(names = "--bpffs", paramLabel = "DIR",
            description = "The bpffs mount the eBPF backend pins its maps and programs under, in npm-agent/ (default: /sys/fs/bpf).")
    Path bpffs;

    @Option(names = "--cgroup-root", paramLabel = "DIR",
            description = "The cgroup2 directory that holds the pods' processes (kubelet's kubepods, or the whole hierarchy): "
                    + "the eBPF backend applies pods' npm-agent.io/tcp-congestion there. Without it, none is applied.")
    Path cgroupRoot;

    Backends.Placement placement() {
        return Backends.Placement.of(netns, bpffs, cgroupRoot);
    }

    CommandRunner runner() {
        return placement().runner();
    }

    Backends.Chosen choose(BandwidthOptions bandwidth, Metrics metrics) {
        return Backends.choose(backend, placement(), bandwidth.settings(), metrics);
    }
}
