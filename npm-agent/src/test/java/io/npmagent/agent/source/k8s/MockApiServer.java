package io.npmagent.agent.source.k8s;

import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.kubernetes.client.openapi.ApiClient;
import java.net.InetAddress;
import java.util.HashMap;

/**
 * fabric8's mock API server in CRUD mode (it keeps objects and speaks list and watch), reached by the
 * agent's client through the {@link WatchBridge}. Only for a fault a real API server cannot be made to
 * produce (an object its validation would refuse); every other test of the agent's source runs against
 * a real kube-apiserver.
 */
public final class MockApiServer implements AutoCloseable {
    /** The mock server logs every request at INFO; a strong reference keeps the level set. */
    private static final java.util.logging.Logger QUIET = quiet();
    private final Store store = new Store();
    private final WatchBridge bridge;
    private KubernetesMockServer server;
    private int port;

    public MockApiServer() {
        start(0);
        try {
            bridge = new WatchBridge(port);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static java.util.logging.Logger quiet() {
        // The server renders a whole list on its event loop; at 100,000 pods that takes seconds, which
        // Vert.x reports as a blocked thread, with a stack trace, every second. Known and harmless here.
        System.setProperty("org.slf4j.simpleLogger.log.io.vertx.core.impl.BlockedThreadChecker", "error");
        java.util.logging.Logger l = java.util.logging.Logger.getLogger("io.fabric8.mockwebserver");
        l.setLevel(java.util.logging.Level.WARNING);
        return l;
    }

    private void start(int onPort) {
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), store, false);
        try {
            server.init(InetAddress.getByName("127.0.0.1"), onPort);
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e);
        }
        port = server.getPort();
    }

    /** A fabric8 client for the tests' own writes. */
    public NamespacedKubernetesClient client() {
        return server.createClient();
    }

    /** A client-java client for the agent, as {@link KubeClients} would make one. */
    public ApiClient apiClient() {
        return KubeClients.forWatches(new ApiClient().setBasePath("http://127.0.0.1:" + bridge.port()));
    }

    @Override
    public void close() {
        bridge.close();
        server.destroy();
    }

    /** The objects. */
    private static final class Store extends KubernetesCrudDispatcher {}
}
