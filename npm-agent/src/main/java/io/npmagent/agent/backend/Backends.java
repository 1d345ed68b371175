package io.npmagent.agent.backend;

import io.npmagent.dataplane.backend.Backend;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.iptables.IptablesBackend;
import io.npmagent.iptables.detect.IptablesVariant;
import io.npmagent.iptables.detect.IptablesVariantDetector;
import io.npmagent.iptables.exec.CommandRunner;
import io.npmagent.iptables.model.Family;
import io.npmagent.iptables.nft.NftBackend;
import java.util.List;

/**
 * Builds a backend by name: the one place that knows which names exist and what each needs.
 * {@code iptables} picks the variant the node already uses (as kube-proxy does).
 */
public final class Backends {
    /** Names a backend can be asked for by, most specific last. */
    public static final List<String> NAMES = List.of("iptables", "iptables-nft", "iptables-legacy", "nft");

    private Backends() {}

    public static Backend create(String name, CommandRunner runner, Metrics metrics) {
        switch (name) {
            case "iptables":
                IptablesVariantDetector.Choice choice = new IptablesVariantDetector(runner).detect();
                System.getLogger(Backends.class.getName()).log(System.Logger.Level.INFO,
                        "backend {0}: {1}", choice.variant().backendName(), choice.reason());
                return new IptablesBackend(choice.variant(), runner, metrics, IptablesBackend.Settings.DEFAULTS);
            case "iptables-nft":
                return new IptablesBackend(IptablesVariant.NFT, runner, metrics, IptablesBackend.Settings.DEFAULTS);
            case "iptables-legacy":
                return new IptablesBackend(IptablesVariant.LEGACY, runner, metrics, IptablesBackend.Settings.DEFAULTS);
            case "nft":
                return new NftBackend(runner, metrics, IptablesBackend.Settings.DEFAULTS.timeout());
            default:
                throw new IllegalArgumentException("unknown backend \"" + name + "\" (one of " + String.join(", ", NAMES) + ")");
        }
    }

    /** Whether the tools {@code name} needs are installed. */
    public static boolean available(String name, CommandRunner runner) {
        switch (name) {
            case "iptables":
                return runner.available("ipset") && (available("iptables-nft", runner) || available("iptables-legacy", runner));
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
