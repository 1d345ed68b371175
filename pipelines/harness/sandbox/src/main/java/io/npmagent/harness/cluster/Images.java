package io.npmagent.harness.cluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Every image the node runs, built here and imported into its containerd (no registry): pause (upstream's
 * pause.c), CoreDNS and agnhost from the upstream binaries, agnhost over Debian's versions of the tools
 * upstream's image carries. The agnhost reference is written to
 * {@code STATE/agnhost-image} for the tests and suites that run it.
 */
final class Images implements Step.NodeAction {
    /**
     * What upstream's agnhost image adds to Alpine (its Dockerfile: bind-tools curl netcat-openbsd iproute2 iperf
     * bash), as Debian names them: e2e specs exec {@code /bin/sh -c curl ...} in agnhost pods (NoSNAT, a source
     * address kept through a ClusterIP), and none of it is on the binary alone.
     */
    static final List<String> AGNHOST_PACKAGES = List.of("bind9-dnsutils", "curl", "netcat-openbsd", "iproute2", "iperf");

    @Override
    public void up(Cluster c, Node node) throws Exception {
        UpstreamImages tags = c.images();
        load(c, node, BinaryImage.archive(c, c.bin("pause"), tags.pauseTag(), List.of("/pause")), UpstreamImages.PAUSE);
        load(c, node, BinaryImage.archive(c, c.bin("coredns"), tags.corednsTag(), List.of("/coredns")), UpstreamImages.COREDNS);
        load(c, node, BinaryImage.archive(c, c.bin("agnhost"), tags.agnhostTag(), List.of("/agnhost"), AGNHOST_PACKAGES), UpstreamImages.AGNHOST);
        Files.writeString(c.config().state().resolve("agnhost-image"), tags.agnhost() + "\n");
    }

    /** Imports the OCI archive into the node's containerd as {@code repository}. */
    static void load(Cluster c, Node node, Path archive, String repository) {
        c.must(node.ctr(List.of("images", "import", "--base-name", repository, archive.toString())));
    }
}
