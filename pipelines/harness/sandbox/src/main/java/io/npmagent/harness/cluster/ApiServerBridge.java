package io.npmagent.harness.cluster;

import java.time.Duration;

/** The host's way to the API server: a {@link HostBridge} from 127.0.0.1:PORT (NPM_AGENT_CLUSTER_PORT) to the API server in the first node. */
final class ApiServerBridge implements Step.ClusterAction {
    @Override
    public void up(Cluster c) throws Exception {
        int port = c.config().hostPort();
        HostBridge.start(c, "apiserver", port, "127.0.0.1", ClusterConfig.API_PORT);
        c.awaitKubectl(Duration.ofSeconds(20), "the API server from the host at 127.0.0.1:" + port + " (taken? set NPM_AGENT_CLUSTER_PORT)",
                "get", "--raw", "/readyz");
    }
}
