package io.npmagent.harness.cluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/** CoreDNS as kube-dns (10.96.0.10), from {@code pipelines/cluster-manifests/coredns.yaml} with the image built here. */
final class CoreDns implements Step.ClusterAction {
    @Override
    public void up(Cluster c) throws Exception {
        String manifest = Files.readString(c.checkout().resolve("pipelines/cluster-manifests/coredns.yaml"))
                .replace("@COREDNS_IMAGE@", c.images().coredns());
        Path file = c.config().state().resolve("coredns.yaml");
        Files.writeString(file, manifest);
        c.kubectl("apply", "-f", file.toString());
        c.awaitKubectl(Duration.ofSeconds(120), "CoreDNS", "-n", "kube-system", "rollout", "status", "deployment/coredns", "--timeout=2s");
    }
}
