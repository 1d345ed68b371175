package io.npmagent.agent.backend;

import io.npmagent.bpf.Bbr;
import io.npmagent.bpf.BigTcp;
import io.npmagent.bpf.BpfBackend;
import io.npmagent.bpf.Pacing;
import io.npmagent.bpf.libbpf.Capabilities;
import io.npmagent.dataplane.backend.Backend;
import io.npmagent.dataplane.bandwidth.BandwidthSettings;
import io.npmagent.dataplane.bandwidth.FlowControl;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.iptables.IptablesBackend;
import io.npmagent.iptables.detect.IptablesVariant;
import io.npmagent.iptables.detect.IptablesVariantDetector;
import io.npmagent.dataplane.exec.CommandRunner;
import io.npmagent.dataplane.exec.ProcessRunner;
import io.npmagent.iptables.model.Family;
import io.npmagent.iptables.nft.NftBackend;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds a backend by name: the one place that knows which names exist, what each needs, and what
 * {@code auto} picks. {@code auto} is eBPF where the kernel and libbpf can enforce with it (probed:
 * program and map types, helpers, a bpffs to pin on) and its programs load; otherwise the iptables
 * backend, with the reason in the status line, never no enforcement. {@code iptables} picks the
 * variant the node already uses (as kube-proxy does).
 */
public final class Backends {
    /** Names a backend can be asked for by. */
    public static final List<String> NAMES = List.of("auto", "bpf", "iptables", "iptables-nft", "iptables-legacy", "nft");
    private static final System.Logger LOG = System.getLogger(Backends.class.getName());

    private Backends() {}

    /**
     * Where a backend works: its commands run through {@code runner}, in network namespace {@code netns}
     * (null: the agent's own); the eBPF backend pins under {@code bpffs}/npm-agent.
     */
    public record Placement(CommandRunner runner, String netns, Path bpffs, Path cgroupRoot) {
        public static Placement host() {
            return new Placement(ProcessRunner.host(), null, Capabilities.DEFAULT_BPFFS, null);
        }

        public static Placement of(String netns, Path bpffs) {
            return of(netns, bpffs, null);
        }

        /**
         * @param cgroupRoot the cgroup2 directory holding the pods' processes, for their congestion controls and pacing; null:
         *     none. A hybrid node's cgroup v1 root (the DaemonSet's host /sys/fs/cgroup) means the cgroup2 mount under it.
         */
        public static Placement of(String netns, Path bpffs, Path cgroupRoot) {
            return new Placement(netns == null ? ProcessRunner.host() : ProcessRunner.inNamespace(netns), netns,
                    bpffs == null ? Capabilities.DEFAULT_BPFFS : bpffs, cgroupRoot == null ? null : cgroup2(cgroupRoot));
        }

        /**
         * {@code dir}, or its {@code unified} where {@code dir} is no cgroup2 directory and that is: on a hybrid node (cgroup v1
         * with cgroup2 at /sys/fs/cgroup/unified) the same DaemonSet mount works as on a cgroup2 node.
         */
        static Path cgroup2(Path dir) {
            Path unified = dir.resolve("unified");
            return !Files.exists(dir.resolve("cgroup.controllers")) && Files.exists(unified.resolve("cgroup.controllers")) ? unified : dir;
        }

        public Path pinDir() {
            return bpffs.resolve("npm-agent");
        }
    }

    /** A backend and why it is the one: the status line an operator reads. */
    public record Chosen(Backend backend, String reason) {}

    public static Backend create(String name, Placement where, BandwidthSettings bandwidth, Metrics metrics) {
        return choose(name, where, bandwidth, metrics).backend();
    }

    /**
     * The backend named, or for {@code auto} the best this host allows, with the reason. Only the eBPF
     * backend enforces bandwidth limits ({@code bandwidth} says how); the others report the pods whose
     * limits they leave unenforced.
     */
    public static Chosen choose(String name, Placement where, BandwidthSettings bandwidth, Metrics metrics) {
        Chosen c = byName(name, where, bandwidth, metrics);
        if (c.backend().enforcesBandwidth()) {
            return c;
        }
        String reason = c.reason() + (bandwidth.bbr() ? "; bbr: refused: only the eBPF backend manages bandwidth" : "")
                + (bandwidth.bigTcp() ? "; big tcp: refused: only the eBPF backend manages pods' interfaces" : "");
        return new Chosen(c.backend(), reason);
    }

    private static Chosen byName(String name, Placement where, BandwidthSettings bandwidth, Metrics metrics) {
        switch (name) {
            case "auto":
                return auto(where, bandwidth, metrics);
            case "bpf": {
                BpfBackend bpf = new BpfBackend(where.pinDir(), where.netns(), where.runner(), bandwidth, where.cgroupRoot(), metrics);
                return new Chosen(bpf, "bpf, as asked; " + services(bpf) + "; " + shaping(where, bandwidth, bpf));
            }
            case "iptables":
                IptablesVariantDetector.Choice choice = new IptablesVariantDetector(where.runner()).detect();
                return new Chosen(new IptablesBackend(choice.variant(), where.runner(), metrics, IptablesBackend.Settings.DEFAULTS),
                        choice.variant().backendName() + ": " + choice.reason());
            case "iptables-nft":
                return new Chosen(new IptablesBackend(IptablesVariant.NFT, where.runner(), metrics, IptablesBackend.Settings.DEFAULTS),
                        "iptables-nft, as asked");
            case "iptables-legacy":
                return new Chosen(new IptablesBackend(IptablesVariant.LEGACY, where.runner(), metrics, IptablesBackend.Settings.DEFAULTS),
                        "iptables-legacy, as asked");
            case "nft":
                return new Chosen(new NftBackend(where.runner(), metrics, IptablesBackend.Settings.DEFAULTS.timeout()), "nft, as asked");
            default:
                throw new IllegalArgumentException("unknown backend \"" + name + "\" (one of " + String.join(", ", NAMES) + ")");
        }
    }

    /** Where the eBPF backend judges egress through a Service, and whether it applies pods' congestion controls. */
    private static String services(BpfBackend bpf) {
        String problem = bpf.forwardHookProblem();
        String congestion = bpf.congestionProblem();
        return (problem == null ? "egress to Services judged after DNAT (netfilter forward hook)" : problem)
                + "; " + (congestion == null ? "pods' TCP congestion controls applied (sock_ops)" : congestion);
    }

    /**
     * The eBPF backend's bandwidth status: how rates are bounded, the flow control (and, for
     * back-pressure, why it is not in place if it is not), and BBR if asked for (turned on here, or why not).
     */
    private static String shaping(Placement where, BandwidthSettings bandwidth, BpfBackend bpf) {
        String backPressure = bandwidth.flowControl() == FlowControl.BACK_PRESSURE ? bpf.backPressureProblem() : null;
        return Pacing.describe(bandwidth) + "; flow control " + bandwidth.flowControl().label() + (backPressure == null ? "" : " (" + backPressure + ")")
                + (bandwidth.bbr() ? "; " + Bbr.enable(where.runner()) : "")
                + (bandwidth.bigTcp() ? "; " + BigTcp.describe() : "");
    }

    private static Chosen auto(Placement where, BandwidthSettings bandwidth, Metrics metrics) {
        Capabilities caps = Capabilities.probe(where.bpffs());
        String why;
        if (caps.canEnforce()) {
            try {
                BpfBackend backend = new BpfBackend(where.pinDir(), where.netns(), where.runner(), bandwidth, where.cgroupRoot(), metrics);
                Chosen bpf = new Chosen(backend, caps.describe() + "; " + services(backend) + "; " + shaping(where, bandwidth, backend));
                LOG.log(System.Logger.Level.INFO, "backend {0}", bpf.reason());
                return bpf;
            } catch (RuntimeException e) {
                why = "eBPF could not load (" + e.getMessage() + ")";
            }
        } else {
            why = "eBPF cannot enforce here (missing: " + String.join(", ", caps.missing()) + ")";
        }
        Chosen fallback = byName("iptables", where, bandwidth, metrics);
        Chosen out = new Chosen(fallback.backend(), why + "; falling back to " + fallback.reason());
        LOG.log(System.Logger.Level.WARNING, "backend {0}", out.reason());
        return out;
    }

    /**
     * Removes everything backend {@code name} puts in the kernel, whatever run put it there; for
     * {@code auto}, everything of every backend whose tools are here. The eBPF backend's removal loads
     * nothing (a newer or older agent's pins go as well). Returns the backends it uninstalled.
     */
    public static List<String> uninstall(String name, Placement where) {
        if (name.equals("auto")) {
            List<String> done = new ArrayList<>();
            for (String each : List.of("bpf", "iptables-nft", "iptables-legacy", "nft")) {
                boolean here = each.equals("bpf") ? Files.isDirectory(where.pinDir()) : available(each, where);
                if (here) {
                    done.addAll(uninstall(each, where));
                }
            }
            return done;
        }
        if (name.equals("bpf")) {
            BpfBackend.uninstall(where.pinDir(), where.netns(), where.runner());
            return List.of("bpf");
        }
        try (Backend b = create(name, where, BandwidthSettings.DEFAULTS, new Metrics(new PrometheusRegistry()))) {
            b.uninstall();
            return List.of(b.name());
        }
    }

    /**
     * Whether the tools and kernel features {@code name} needs are here, a bpffs to pin on aside: for
     * the sandbox and the pipelines, which mount bpffs of their own.
     */
    public static boolean supported(String name, CommandRunner runner) {
        if (name.equals("bpf")) {
            return Capabilities.probe(Capabilities.DEFAULT_BPFFS).kernelCanEnforce() && runner.available("ip");
        }
        return available(name, new Placement(runner, null, Capabilities.DEFAULT_BPFFS, null));
    }

    /** Whether what {@code name} needs is here: its tools, or for bpf the kernel features and a bpffs. */
    public static boolean available(String name, Placement where) {
        CommandRunner runner = where.runner();
        switch (name) {
            case "auto":
                return available("bpf", where) || available("iptables", where);
            case "bpf":
                return Capabilities.probe(where.bpffs()).canEnforce() && runner.available("ip");
            case "iptables":
                return runner.available("ipset") && (available("iptables-nft", where) || available("iptables-legacy", where));
            case "iptables-nft":
                return runner.available("ipset") && runner.available(IptablesVariant.NFT.restore(Family.IPV4));
            case "iptables-legacy":
                return runner.available("ipset") && runner.available(IptablesVariant.LEGACY.restore(Family.IPV4));
            case "nft":
                return runner.available("nft");
            default:
                return false;
        }
    }
}
