package io.npmagent.iptables.detect;

import io.npmagent.iptables.model.Family;

/** The two iptables back ends: the kernel's legacy xtables, and the nf_tables-based one. */
public enum IptablesVariant {
    LEGACY("legacy"),
    NFT("nft");

    private final String suffix;

    IptablesVariant(String suffix) {
        this.suffix = suffix;
    }

    /** {@code iptables-legacy}, {@code iptables-nft}: the backend's name. */
    public String backendName() {
        return "iptables-" + suffix;
    }

    /** {@code iptables-nft}, {@code ip6tables-legacy} and so on: the command that lists one chain. */
    public String command(Family family) {
        return (family == Family.IPV4 ? "iptables-" : "ip6tables-") + suffix;
    }

    public String restore(Family family) {
        return (family == Family.IPV4 ? "iptables-" : "ip6tables-") + suffix + "-restore";
    }

    public String save(Family family) {
        return (family == Family.IPV4 ? "iptables-" : "ip6tables-") + suffix + "-save";
    }
}
