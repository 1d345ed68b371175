package io.npmagent.iptables.detect;

import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.CommandRunner;
import io.npmagent.iptables.model.Family;
import java.time.Duration;
import java.util.List;

/**
 * Picks the iptables variant the node already uses, as kube-proxy and its iptables-wrapper do, so the
 * agent's rules live in the same tables as the rest of the node's:
 * <ol>
 *   <li>the variant whose {@code mangle} table has kubelet's {@code KUBE-IPTABLES-HINT} or
 *       {@code KUBE-KUBELET-CANARY} chain (nft checked first);</li>
 *   <li>else the variant holding more rules (legacy only when strictly more);</li>
 *   <li>else nft.</li>
 * </ol>
 * A variant whose tools are missing is never chosen.
 */
public final class IptablesVariantDetector {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final List<String> HINTS = List.of(":KUBE-IPTABLES-HINT", ":KUBE-KUBELET-CANARY");

    private final CommandRunner runner;

    public IptablesVariantDetector(CommandRunner runner) {
        this.runner = runner;
    }

    /** The chosen variant and why, for the start-up status line. */
    public record Choice(IptablesVariant variant, String reason) {}

    public Choice detect() {
        boolean nft = runner.available(IptablesVariant.NFT.save(Family.IPV4));
        boolean legacy = runner.available(IptablesVariant.LEGACY.save(Family.IPV4));
        if (!nft && !legacy) {
            throw new IllegalStateException("neither iptables-nft-save nor iptables-legacy-save is installed");
        }
        if (!legacy) {
            return new Choice(IptablesVariant.NFT, "only iptables-nft is installed");
        }
        if (!nft) {
            return new Choice(IptablesVariant.LEGACY, "only iptables-legacy is installed");
        }
        for (IptablesVariant v : List.of(IptablesVariant.NFT, IptablesVariant.LEGACY)) {
            for (Family f : Family.values()) {
                CommandResult r = runner.run(List.of(v.save(f), "-t", "mangle"), "", TIMEOUT);
                if (r.ok() && HINTS.stream().anyMatch(r.stdout()::contains)) {
                    return new Choice(v, "kubelet's hint chain is in the " + v.backendName() + " mangle table");
                }
            }
        }
        long legacyRules = rules(IptablesVariant.LEGACY);
        long nftRules = rules(IptablesVariant.NFT);
        if (legacyRules > nftRules) {
            return new Choice(IptablesVariant.LEGACY, legacyRules + " legacy rules against " + nftRules + " nft rules");
        }
        return new Choice(IptablesVariant.NFT, nftRules + " nft rules against " + legacyRules + " legacy rules");
    }

    private long rules(IptablesVariant v) {
        long n = 0;
        for (Family f : Family.values()) {
            CommandResult r = runner.run(List.of(v.save(f)), "", TIMEOUT);
            if (r.ok()) {
                n += r.stdout().lines().filter(l -> l.startsWith("-")).count();
            }
        }
        return n;
    }
}
