package io.npmagent.agent.source.k8s;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.crud.AttributeSet;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.kubernetes.client.openapi.ApiClient;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.List;

/**
 * fabric8's mock API server in CRUD mode (it keeps objects and speaks list and watch), with what the
 * tests need around it: a restart on the same port that keeps the objects (the store outlives the
 * server), and, through the {@link WatchBridge} the agent's client talks to, watches answered with 410
 * Gone on demand (as a real server answers an expired resource version) and a log of every request the
 * agent makes, which the RBAC check compares with the ClusterRole.
 */
public final class MockApiServer implements AutoCloseable {
    /** The mock server logs every request at INFO; a strong reference keeps the level set. */
    private static final java.util.logging.Logger QUIET = quiet();
    private static final String CREATED = java.time.Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
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

    /** Stops the server (every open watch drops) and starts another on the same port with the same objects. */
    public void restart() {
        server.destroy();
        start(port);
    }

    /** The next {@code n} watch requests get a 410 Gone ERROR event instead of a stream: the client must relist. */
    public void expireNextWatches(int n) {
        bridge.expire.set(n);
    }

    /** A fabric8 client for the tests' own writes. */
    public NamespacedKubernetesClient client() {
        return server.createClient();
    }

    /** A client-java client for the agent, as {@link KubeClients} would make one. */
    public ApiClient apiClient() {
        return KubeClients.forWatches(new ApiClient().setBasePath("http://127.0.0.1:" + bridge.port()));
    }

    /** A kubeconfig that points a client (an agent process) at the bridge, without credentials. */
    public String kubeconfig() {
        return "apiVersion: v1\nkind: Config\nclusters: [{name: mock, cluster: {server: \"http://127.0.0.1:" + bridge.port()
                + "\"}}]\nusers: [{name: none, user: {}}]\ncontexts: [{name: mock, context: {cluster: mock, user: none}}]\ncurrent-context: mock\n";
    }

    /** Where the agent's client connects: the bridge in front of the server. */
    public int bridgePort() {
        return bridge.port();
    }

    /** "METHOD path?query" of every request the agent's client made so far. */
    public List<String> requests() {
        return bridge.requests();
    }

    /**
     * Puts objects straight into the store, as a create through the API would leave them (a new
     * resource version each), without an HTTP request each: the CRUD dispatcher checks every create
     * against every object it holds, so creating 100,000 pods through the API takes hours. Watches
     * are not told; for setting a cluster up before anything lists it.
     *
     * @param collection the collection's path, as a create would POST to ({@code /api/v1/namespaces/x/pods})
     */
    public void preload(String collection, HasMetadata object) {
        object.getMetadata().setResourceVersion(Long.toString(store.requestResourceVersion()));
        // What a create sets and an update keeps: without them the server fails an update of the object.
        object.getMetadata().setUid(java.util.UUID.randomUUID().toString());
        object.getMetadata().setCreationTimestamp(CREATED);
        object.getMetadata().setGeneration(1L);
        String json = Serialization.asJson(object);
        AttributeSet key = AttributeSet.merge(store.getAttributeExtractor().fromPath(collection), store.getAttributeExtractor().fromResource(json));
        store.getMap().put(key, json);
    }

    @Override
    public void close() {
        bridge.close();
        server.destroy();
    }

    /** The objects, kept across restarts of the server. */
    private static final class Store extends KubernetesCrudDispatcher {}
}
