package io.npmagent.agent.source.k8s;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.KubeConfig;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** How the agent reaches the API server: a kubeconfig file when given, else in-cluster, else client-java's standard search. */
public final class KubeClients {
    private KubeClients() {}

    /**
     * @param kubeconfig a kubeconfig file, or null: then the pod's service account where there is one
     *                   ({@code KUBERNETES_SERVICE_HOST}), else {@code $KUBECONFIG} or {@code ~/.kube/config}
     */
    public static ApiClient connect(Path kubeconfig) throws IOException {
        ApiClient client;
        if (kubeconfig != null) {
            try (Reader r = Files.newBufferedReader(kubeconfig, StandardCharsets.UTF_8)) {
                client = ClientBuilder.kubeconfig(KubeConfig.loadKubeConfig(r)).build();
            }
        } else if (System.getenv("KUBERNETES_SERVICE_HOST") != null) {
            client = ClientBuilder.cluster().build();
        } else {
            client = ClientBuilder.standard().build();
        }
        return forWatches(client);
    }

    /** The same client with no read timeout: a watch is a request that stays open for minutes. */
    public static ApiClient forWatches(ApiClient client) {
        client.setHttpClient(client.getHttpClient().newBuilder().readTimeout(0, TimeUnit.SECONDS).build());
        return client;
    }
}
