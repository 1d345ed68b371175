package io.npmagent.harness.cluster;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The node's CNI configuration, which containerd reads: upstream's bridge plugin on {@code cni0}
 * (gateway, masquerade, hairpin) with host-local addresses from the node's pod range, and portmap.
 */
final class CniConfig implements Step.NodeAction {
    @Override
    public void up(Cluster c, Node node) throws Exception {
        Path dir = Files.createDirectories(node.cniDir().resolve("net.d"));
        Files.writeString(dir.resolve("10-bridge.conflist"), render(c.config().name(), node));
    }

    static String render(String network, Node node) {
        return """
                {
                  "cniVersion": "1.0.0",
                  "name": "%s",
                  "plugins": [
                    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
                     "ipam": {"type": "host-local", "ranges": [[{"subnet": "%s"}]], "routes": [{"dst": "0.0.0.0/0"}],
                              "dataDir": "%s"}},
                    {"type": "portmap", "capabilities": {"portMappings": true}}
                  ]
                }
                """.formatted(network, node.podCidr(), node.cniDir().resolve("ipam"));
    }
}
