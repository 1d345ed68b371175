package io.npmagent.harness.controlplane;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * network-policy-api as its pinned module ({@code pipelines/upstream/network-policy-api}) publishes it: the
 * ClusterNetworkPolicy CRD of either channel, applied as published.
 */
public final class NetworkPolicyApi {
    public static final String MODULE = "sigs.k8s.io/network-policy-api";

    /** The CRD's channels: Standard (what a cluster installs by default), Experimental (nodes peers, named ports, domainNames). */
    public enum Channel {
        STANDARD("standard"), EXPERIMENTAL("experimental");

        private final String dir;

        Channel(String dir) {
            this.dir = dir;
        }
    }

    private NetworkPolicyApi() {}

    /** The CRD file of {@code channel}, from the pinned module. */
    public static Path crd(Channel channel) throws IOException {
        Path module = GoModules.dir(Checkout.root().resolve("pipelines/upstream/network-policy-api"), MODULE);
        Path crd = module.resolve("config/crd/" + channel.dir + "/policy.networking.k8s.io_clusternetworkpolicies.yaml");
        if (!Files.isRegularFile(crd)) {
            throw new IOException(crd + " is missing from " + MODULE + " as published");
        }
        return crd;
    }
}
